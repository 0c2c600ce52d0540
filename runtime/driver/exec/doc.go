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
// Isolation. A task whose TaskConfig.Isolation is set (the client sets it
// for every exec task but a CSI plugin's) runs as Nomad's exec tasks do,
// when the agent is root (otherwise it runs unisolated, with its
// directory variables turned into host paths). The executor starts itself
// again as "init" in new mount, pid and ipc namespaces (init_linux.go);
// init makes every mount private, builds the root on a small tmpfs at
// <TaskDir>/.executor/root (rootfs_linux.go): Config.ChrootEnv (Nomad's
// default chroot_env: /bin /etc /lib /lib32 /lib64 /run/resolvconf /sbin
// /usr, those that exist) bound read-only, /alloc, /local and /tmp bound
// from the allocation's shared dir and the task dir's local and tmp,
// /secrets a tmpfs of mode 0700 owned by the task's user, a minimal /dev
// (null zero full random urandom tty, a private devpts with ptmx, shm)
// and a fresh /proc, and the Isolation.Mounts (volumes) at their
// destinations; it makes the tmpfs read-only, pivot_roots into it, drops
// the bounding set to Nomad's exec default allow_caps, sets
// no_new_privs, becomes the task's user (nobody when the task names
// none; a user on Config.UserDenylist, Nomad's default root and
// Administrator, is refused) and executes the task, which so is pid 1 of
// its namespace, in /local. Nothing of this is seen on the host, and all
// of it goes with the namespace. ExecTask on an isolated task runs the
// executor binary as "enter" (enter_linux.go), which joins the task's
// namespaces on a locked thread, restricts it the same way and runs the
// command from there: `alloc exec` sees the task's root.
//
// Each task gets a cgroup of its own (cgroup_linux.go, runtime/cgroups),
// Nomad's "<alloc>.<task>" below Config.CgroupParent: StartTask creates
// it with the task's limits (memory_max, else memory, as the hard limit,
// memory as the soft one, the MHz as CPU shares or weight, as a cpuset
// TaskConfig.ReservedCores, the cores the scheduler reserved, or without
// them TaskConfig.Cores whole cores that no other task of the driver
// holds, picked locally, a pids limit) and names it in the spec; the executor enters it, starts the task
// (born in it, before it runs a line of its own) and leaves it again, so
// that killing the group never kills the executor. When the task exits the
// executor kills what is left in the group (a daemon that left the task's
// session) and records in exit.json whether the kernel OOM-killed a
// process in it (ExitResult.OOMKilled, exit code 137). The kill of
// StopTask's timeout kills the group too; DestroyTask removes it;
// RecoverTask finds it again by the path in the handle. TaskStats
// (driver.Statser) samples it. A host without cgroups (not root, none
// mounted) runs tasks without one, as before, and says so in the log.
//
// Raw mode (Config.Raw) is Nomad's raw_exec driver, named "raw_exec" in
// its fingerprint (driver.raw_exec) and handles: the same executor,
// cgroup and recovery, but never isolated (TaskConfig.Isolation is
// ignored), so the task runs on the host's root as the agent's user.
// Config.Disabled (raw_exec is off unless the client enables it) makes
// the driver undetected and refuse starts; it still recovers its tasks.
// Drivers built with Config.CgroupsOf share that driver's cgroup state,
// the held cores among it: the agent's exec, java (its exec) and raw_exec
// drivers draw on one pool of cores.
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
