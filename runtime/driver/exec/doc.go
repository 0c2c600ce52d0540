// Package exec is the "exec" task driver: it runs a task as a plain host
// process, in its own process group, under a small supervisor process, the
// executor, so that tasks survive an agent restart and the restarted agent
// still learns their exit status (as Nomad's executor does).
//
// StartTask writes the task's spec to <TaskDir>/.executor/spec.json and
// starts the executor (Config.ExecutorPath with Config.ExecutorArgs and the
// spec's path) in a new session, so that killing the agent, even its whole
// process group, leaves the executor and the task running. The executor
// starts the task (stdin /dev/null, stdout and stderr appended to the task's
// log files, or, when TaskConfig.LogMaxFiles is set, through pipes that the
// executor copies into rotated files (logs_linux.go); exactly the task's
// environment, working dir TaskDir, the task's user when the agent is
// root, in the network namespace TaskConfig.NetnsPath names when it names
// one), writes pid.json, waits for the task, kills
// what is left of its process group, and writes exit.json atomically.
//
// The driver and the executor run as root, so neither follows a name or a
// symlink out of the task's allocation dir (TaskDir's parent): StartTask
// refuses an AllocID or TaskName that is not one path element, a TaskDir
// that is not a clean absolute path or is a symlink, and log files outside
// the allocation dir; the state dir, spec, pid and exit files and the log
// files are made and opened through runtime/safepath beneath it, so a link
// planted there (stdout -> /etc/shadow) fails the start instead.
//
// The binary that runs as the executor must call ExecutorMain. cmd/troupe
// does it for its hidden "troupe executor <spec>" subcommand; tests do it
// from TestMain when an environment variable that they pass through
// Config.ExecutorEnv is set:
//
//	func TestMain(m *testing.M) {
//		if os.Getenv("TROUPE_TEST_EXECUTOR") == "1" {
//			os.Exit(exec.ExecutorMain(os.Args[1:]))
//		}
//		os.Exit(m.Run())
//	}
//
//	d := exec.New(exec.Config{ExecutorPath: os.Args[0],
//		ExecutorEnv: []string{"TROUPE_TEST_EXECUTOR=1"}})
//	defer d.Shutdown()
//
// ExecTask (exec_linux.go, driver.Execer) runs a command in a running
// task's context, read from its spec: the task's working dir, exactly its
// environment and PATH, its user when the agent is root, its network
// namespace. It runs in a process group of its own, on pipes or, with Tty,
// as the leader of a new session on a pty (creack/pty) that Resize sizes;
// its leftover processes are killed when it exits or ctx ends.
//
// The TaskHandle's State holds the executor's pid, its start time and the
// state directory; RecoverTask on a new Driver re-attaches through it and
// detects pid reuse by comparing /proc/<pid>/stat start times. A Driver owns
// one watcher goroutine per task; Shutdown stops them and leaves the tasks
// running. The driver works on Linux only; elsewhere Fingerprint reports it
// undetected and its methods fail with driver.ErrNotSupported.
package exec
