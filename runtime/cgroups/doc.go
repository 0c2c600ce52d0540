// Package cgroups gives each task a control group of its own, on cgroup
// v1 (one hierarchy per controller: cpu, cpuacct, cpuset, memory, pids,
// freezer) and v2 (the unified hierarchy), through containerd/cgroups/v3.
//
// A Manager, made by New for a parent (default "/troupe" on v1,
// "/troupe.slice" on v2, as Nomad uses "/nomad" and "nomad.slice"),
// creates one Group per task named "<allocID>.<task>" (".scope" on v2)
// with the task's limits (Resources): a hard memory limit, a soft one
// (v1 memory.soft_limit_in_bytes, v2 memory.low), CPU shares (v1) or the
// weight converted from them (v2), a cpuset and a pids limit. Load finds
// a group again by its path (an agent restarted re-attaches to it).
//
// A Group lists and kills every process in it (v1: freeze, SIGKILL each,
// thaw; v2: cgroup.kill, or the same freeze-and-kill on kernels before
// 5.14), so a task that daemonised (setsid and a double fork) dies with
// it. It reports usage (Stats: memory RSS, cache, swap, usage, max usage,
// kernel usage; CPU user, system and total time, throttling) and how many
// processes the kernel OOM-killed in it (v1 memory.oom_control oom_kill,
// v2 memory.events oom_kill). Delete kills what is left and removes it.
//
// Enter moves the calling process into a group and returns a function
// that moves it back: the exec driver's executor enters the task's group,
// starts the task (which is born in it, before it runs its own code) and
// leaves again, so that killing the group never kills the executor.
//
// On v2 a limit whose controller the hierarchy's root does not offer (a
// hybrid host binds its controllers to v1) is refused with
// ErrControllerMissing naming it, never a group that silently does not
// limit. Groups lists the groups below the parent and RemoveParent
// deletes them all and the parent (an agent's start-up sweep of orphans,
// tests).
//
// Mode says which version the host runs; ModeNone (no cgroup file system,
// or not root) makes New fail with ErrUnavailable, and drivers then run
// tasks without a group.
package cgroups
