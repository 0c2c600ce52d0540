// Package containerd is the "containerd" task driver: it runs each task as
// a container of a containerd daemon (1.6 or later), through containerd's
// Go client, in one containerd namespace (default "troupe").
//
//	d := containerd.New(containerd.Config{Address: "/run/containerd/containerd.sock"})
//	defer d.Shutdown()
//	h, err := d.StartTask(ctx, &driver.TaskConfig{ID: "alloc1/web", ...,
//		Config: map[string]any{"image": "registry:5000/web:1", "args": []any{"--port", "80"}}})
//
// A task's container id, which is also its snapshot key, is
// ContainerID(task id): "<allocID>/<task>" with "/" turned into "-". The
// task config (driver.TaskConfig.Config) takes these keys; others are
// refused as driver.ErrInvalidConfig:
//
//	image          "host[:port]/name:tag" pulled (unless present, or with
//	               force_pull) over plain HTTP for loopback registries or
//	               with insecure; or "oci-archive:///path/img.tar"
//	               (relative: in the task dir) imported once per file version
//	image_name     the name of an imported archive's image, needed when its
//	               index names none
//	command, args  the process; without command, args follow the image's
//	               entrypoint, and without both the image's command runs
//	work_dir       the process's working dir
//	auth           {username, password} for the registry
//	insecure, force_pull, privileged  (bools)
//	mounts         [{type, source, target, options, readonly}] (type bind
//	               by default, then rbind)
//	volume_mounts  [{source, target, readonly}] bind mounts (volume hooks)
//	devices        ["/dev/x" or {path, container_path, permissions}]: device
//	               nodes with their cgroup rule (permissions from "rwm")
//	netns_path     join this network namespace (the network hook's netns)
//	network_mode   "host" (the default without netns_path) or "none"
//
// TaskConfig.Env, User (resolved in the image), CPU (MHz to CPU shares,
// 1000 MHz = 1024), MemoryMaxMB (or MemoryMB) as the memory limit and
// MemoryMB as the reservation below it go into the OCI spec. TaskDir is
// bind-mounted at /local.
//
// Logs: with a logs block (TaskConfig.LogMaxFiles, LogMaxFileSizeMB) the
// task's stdout and stderr rotate as StdoutPath.N and StderrPath.N
// (runtime/logrotate; the alloc runner names them Nomad's way,
// <alloc>/alloc/logs/<task>.stdout.N). The writer must keep writing while
// the agent is down, so it cannot be the agent, nor FIFOs the agent
// copies from (containerd would hold their data until an agent
// re-attached, and a full FIFO stalls the task). It is a log forwarder
// (runtime/logmon: the troupe binary, Config.LogmonPath, as the hidden
// `troupe logmon <spec>`) that containerd's shim itself starts, as the
// task's binary:// logger (cio.BinaryIO): the shim's child, owning the
// read ends of the task's stdout and stderr pipes, living as long as the
// task's shim does, whatever the agent and containerd do. A restarted
// agent re-attaches to nothing: RecoverTask loads the task as before and
// the logs have gone on rotating. The shim stops the forwarder (closing
// the pipes, then SIGTERM) when DestroyTask deletes the task; the
// forwarder copies what is left first. StartTask opens the files itself
// first (logmon.Prepare), so that a log the forwarder could not write (a
// symlink planted there, a missing dir) fails the start. Without a logs
// block the shim appends each stream straight to StdoutPath and
// StderrPath (regular files). The TaskHandle's State holds the container id and namespace;
// RecoverTask on a new Driver loads the container and its task: a task that
// exited meanwhile yields its result at once, and a container or task that
// containerd lost (a host reboot wipes its state) is driver.ErrTaskNotFound.
// An exit code of 129..192 is read as death by signal (code-128), and
// ExitResult.OOMKilled comes from the task's cgroup ("oom_kill" of
// memory.oom_control or memory.events), read after the exit and before
// DestroyTask deletes the task, its container and its snapshot.
//
// ExecTask (exec_linux.go, driver.Execer) runs a command in a running
// task's container, through the task's shim (runc exec): the container's
// process spec (user, env, cwd, capabilities) with the command as its
// Args, and a unique exec id. Piped, the end of opts.Stdin closes the
// process's stdin (CloseIO: the shim holds the FIFO open until told); on
// a pty (cio.WithTerminal) output comes as one stream, opts.Resize resizes
// it, and stdin's end closes nothing (the shim would hang the terminal
// up). The exit code is the shim's (128+signal for a signal death); ctx's
// end SIGKILLs the process; the process is deleted from the task in any
// case. A command the runtime cannot start answers 126 with the runtime's
// message on stderr. It works on recovered tasks as on started ones.
//
// Cleanup(ctx, keep) removes the containers (killing their tasks) and
// active snapshots of the namespace that keep rejects: what stale
// allocations left. The driver works on Linux only; elsewhere Fingerprint
// reports it undetected and its methods fail with driver.ErrNotSupported.
//
// The tests run as root against a containerd, runc, busybox and
// docker-registry of the host, each test binary starting its own
// containerd under /tmp; without root they skip (with CI=true they fail).
package containerd
