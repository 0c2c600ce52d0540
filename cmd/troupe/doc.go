// Command troupe is troupe's single binary: the cluster daemon
// (`troupe agent`) and the command-line client of its HTTP API.
//
// main.go dispatches `troupe <cmd> [<sub>...] [flags] args` through a tree
// of commands. Each CLI command is a func(args, stdout, stderr) int in its
// own file (job.go, job_status.go, job_monitor.go, alloc.go, alloc_logs.go,
// alloc_ops.go (alloc signal, alloc restart), alloc_fs.go (alloc fs: a
// directory lists, a file prints; -stat, -tail -n/-c, -f), alloc_exec.go
// (alloc exec: the exec websocket; -i forwards stdin, -t asks for a pty
// and, when stdin is a terminal, makes it raw and sends its size on
// SIGWINCH; the exit code is the command's),
// node.go, node_pool.go, namespace.go (namespace list, status, apply,
// delete), eval.go, server.go, operator.go, actors.go,
// var.go (var get|put|list|purge, operator root keyring rotate),
// system.go (system gc));
// format.go holds the table and time helpers, lookup.go the ID-prefix
// lookups, meta.go the flags every command shares: -address (default
// $TROUPE_ADDR, else http://127.0.0.1:4646), -namespace (default
// $TROUPE_NAMESPACE, else $NOMAD_NAMESPACE, else "default"; "*" lists
// every namespace, and finds a job in any) and, where a command prints an
// API object, -json. A job file that names a namespace is run and planned
// in it, as by Nomad's CLI.
// The environment and the clock are read through getenv and nowFunc so
// tests can replace them.
//
// Output follows Nomad's CLI: short IDs are 8 characters, dates RFC 3339 in
// UTC, relative times "12s ago"; errors go to stderr as "Error <doing
// what>: <reason>" with exit code 1. `troupe job run` exits 2 on placement
// failures or a failed allocation, as `nomad job run` does.
//
// agent.go, executor.go and bench.go (the daemon, the hidden task executor
// and the benchmarks) are wired in by the integrator.
package main
