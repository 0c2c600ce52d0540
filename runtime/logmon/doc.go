// Package logmon is the log forwarder: a small process, the troupe binary
// run as the hidden `troupe logmon <spec>` subcommand, that reads a task's
// stdout and stderr from pipes and writes them into rotated files
// (runtime/logrotate), Nomad's <alloc>/alloc/logs/<task>.stdout.N layout.
//
// It is for the drivers whose task is supervised by a process other than
// the agent (containerd's shim, the qemu driver's shell shim): the
// forwarder belongs to that supervisor's side, not to the agent, so the
// logs go on being collected and rotated while the agent is down, and a
// restarted agent has nothing to re-attach. (The exec-family drivers need
// none: their executor pumps the pipes itself.)
//
// Its protocol is containerd's for a binary:// logger: the stdout pipe's
// read end is fd 3, stderr's fd 4, and fd 5 a pipe the forwarder closes
// once its files are open (having written a one-line error there first
// when they cannot be). It copies until both pipes reach EOF (every
// writer is gone); SIGTERM, SIGINT or SIGHUP do not cut that short, but
// once one has come it waits at most DrainTimeout more. Its own stderr
// gets its write errors (containerd's shim hands it /dev/null).
//
//   - containerd: the driver hands the shim BinaryIO(bin, spec), a
//     binary:///<bin>?logmon=<spec JSON> URI; the shim starts the forwarder
//     as its own child with the container's pipes, before the task, and
//     stops it (SIGTERM after closing the pipes) when the task is deleted.
//     The shim passes the URI's query as argument pairs, so the one key
//     "logmon" makes the command line `<bin> logmon <spec JSON>`.
//   - qemu: the driver calls Start, which runs the forwarder in a session
//     of its own and returns the pipes' write ends for the shim's stdout
//     and stderr; the forwarder exits after the shim and qemu do.
//
// A binary that may serve as the forwarder (the troupe binary, and a test
// binary whose drivers use its os.Executable) dispatches on its first
// argument before anything else:
//
//	if len(os.Args) > 1 && os.Args[1] == logmon.Command {
//		os.Exit(logmon.Main(os.Args[2:]))
//	}
//
// Prepare opens (creating .0) and closes a spec's writers in the caller,
// so that a bad path fails the task's start with a clear error instead of
// a forwarder that dies unseen.
package logmon
