package main

import (
	"github.com/troupe-dev/troupe/runtime/driver/exec"
	"github.com/troupe-dev/troupe/runtime/logmon"
)

// executorCommand runs the hidden `troupe executor` subcommand: the exec
// driver's supervisor of one task, which outlives agent restarts.
func executorCommand(args []string) int { return exec.ExecutorMain(args) }

// logmonCommand runs the hidden `troupe logmon` subcommand: the log
// forwarder of a containerd or qemu task (runtime/logmon), which writes
// its rotated logs while no agent runs.
func logmonCommand(args []string) int { return logmon.Main(args) }
