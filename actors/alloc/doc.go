// Package alloc holds the client-side actors that run one allocation: the
// alloc actor (client/allocs/<id>), one task actor per task
// (client/allocs/<id>/tasks/<name>) and, while the allocation lets go of
// its CSI volumes, one volume actor per volume
// (client/allocs/<id>/volumes/<name>).
//
// How to read it. The alloc actor (alloc.go, alloc_tasks.go) is a thin
// carrier of effects: its Lifecycle (lifecycle.go, with its steps in
// lifecycle_steps.go) is the one state table of an allocation, a pure
// Step(event) (Effects, error) with a whole-table test, as NodeStatus is
// in actors/node. Its phases are loading, prerun, running, stopping,
// postrun and terminal (and the waits before a retry):
//
//	loading -> prerun (each hook in order) -> running -> stopping
//	        -> postrun (each hook in reverse order) -> terminal
//
// The hooks are one ordered list (hookList in hooks.go), one file each:
//
//	network_hook.go   bridge network namespace (first up, last down)
//	allocdir_hook.go  the allocation's directories
//	identity_hook.go  the tasks' workload identities, signed by a server:
//	                  NOMAD_TOKEN, secrets/nomad_token, and the token
//	                  their templates read variables with
//	device_hook.go    no device plugin: fail before any task starts
//	Spec.Hooks        the caller's own
//	csi_hook.go       csi volumes (last up, first down)
//
// A hook implements only the phases it needs (prerunHook, postrunHook,
// updateHook, restoreHook; an actorHook runs its phases on the actor and
// says how they retry): the next hook (task lifecycle, services and
// checks, templates) is a new file and a line in hookList. Artifacts are
// a task's own step (artifact_hook.go): fetched by runtime/artifact in the
// worker of each start until they are in place, before the driver; a
// failure is the task event "Failed Artifact Download" and the task's
// restart policy decides, as in Nomad. Templates are rendered next, in the
// same worker, at every start (template_task.go), so a template's source
// may be a file an artifact fetched and a restart runs with the env of
// now; the alloc actor's template hook watches them once the tasks run.
// The lifecycle decides the order, the retries (with backoff on the
// injected clock), stops during the setup and what a failure tears down;
// the actor logs every phase change. A failed read of the state file is
// read again with backoff (Spec.LoadRetry), for ever: it is never taken
// as "nothing stored", which would start tasks that already run; so is a
// failed read of a task's stored handle (taskSpec.HandleRetry), which is
// never "no handle". The task actor has its own phases (taskPhase,
// task_phase.go).
//
// The alloc actor spawns the task actors once every prerun is done, in the
// order of their lifecycle blocks (taskOrder, task_lifecycle.go: prestart
// tasks first, the main tasks once they finished or, sidecars, run,
// poststart tasks once the main tasks run, poststop tasks once everything
// else is dead; sidecars are stopped when the main tasks are dead, and
// tasks that did not start when the allocation stops never do), folds
// their states into the allocation's client status and reports every
// change to its parent (the client's node actor). The task actor starts,
// watches, restarts and stops one task through a runtime driver; every
// driver call runs in a worker (actors.Go) and comes back as a message.
//
// CSI volumes (Spec.CSI, a CSIConfig; nil means no CSI support). Before
// the tasks start, a worker claims each volume from the leader
// (VolumeClaimer; per_alloc volumes claim "<source>[<index>]"), finds the
// node plugin the claim names, stages (when the plugin stages) under
// CSIConfig.Root/staging, publishes under CSIConfig.Root/per-alloc and
// gives the target to each task that mounts it: an isolated exec task
// (layout.go: every exec task but a CSI plugin's) and a containerd task
// get it from their driver at the mount's destination in their own root
// (driver.Isolation.Mounts, "volume_mounts"); a task in the host's root
// gets a bind mount at volumeMountPath (Mounter). Each learns where as
// TROUPE_VOLUME_<NAME>.
// Host volumes (host_volumes.go) need no setup: a mount resolves to the
// node's directory (Spec.Node.HostVolumes) and reaches an isolated exec,
// java or containerd task the same way, read-only when the node's volume,
// the request or the mount says so; a task in the host's root (raw_exec,
// qemu, a CSI plugin, exec or java on an agent not running as root) fails with Nomad's "does not support host volumes",
// and so does a task whose node lacks the volume.
// Retryable failures retry the setup with backoff (ClaimRetry,
// ClaimAttempts); a final one fails the allocation with a volumeError
// (`CSI volume "vol0": NodePublishVolume: rpc error: ...`: the volume the
// server knows, the step, the plugin's answer) as its client description
// and as a Setup Failure event of every task, which never started, and
// lets go of what the setup took, as a stop does. After every task is dead, the alloc actor spawns a volume
// actor per volume that may still be mounted or claimed: it unbinds,
// NodeUnpublishVolume, NodeUnstageVolume when no other allocation on the
// host uses the staged volume, and only then reports the volume
// node-detached; every failure is an event and a retry with backoff on the
// injected clock (CSIConfig.Retry) until its deadline, when the volume is
// marked failed. Which allocations use a staged volume (Usage) is owned by
// one actor per client, the usage actor (UsageActor, CSIConfig.Usage): a
// setup worker's stage and publish and a volume actor's release and
// unstage each take the staged volume's turn there, so they never
// interleave, and no state or lock is shared between alloc actors. The csi hook's postrun ends, and the other hooks' postrun
// begin, once every volume actor finished; the client status is complete or failed
// as soon as the tasks are dead. Allocation.VolumeStates carries each
// volume's state and recent events.
//
// Bridge networking (Spec.Network, a cni.Networker; nil means none). A
// group with network { mode = "bridge" } gets its own network namespace
// before anything else: the ports the scheduler
// allocated (AllocatedResources.Shared.Networks; before it did, the
// group's reserved ports) are mapped from the host, for tcp and udp. The
// CNI result is written to the state file before any task starts; a
// record found on start makes the hook Restore (CNI CHECK) instead of
// Setup, so a restarted agent never makes a second network, and when
// Restore had to make the namespace anew, re-attached tasks are stopped
// and started in it (task event "Network Recreated"). Exec tasks join the
// namespace through driver.TaskConfig.NetnsPath; containerd tasks get it,
// and their csi volumes, in their driver config ("netns_path",
// "volume_mounts"). Tasks learn their ports as Nomad's NOMAD_PORT_<label>,
// NOMAD_HOST_PORT_<label>, NOMAD_IP_<label>, NOMAD_ALLOC_IP_<label>...
// and the same TROUPE_ names; the server learns the address as
// Allocation.NetworkStatus. Setup errors (a host port in use, a bad
// request, an unsupported mode) fail the allocation with their message.
// The network is torn down last, after the tasks, the volumes and the
// postrun hooks, retried with backoff on the injected clock (NetworkRetry,
// 1 s doubling to 1 min for 24 h by default; NetworkAttempts); only then
// is its record dropped.
//
// Devices (Spec.Devices, a device.Plugin; nil means none). A task the
// scheduler gave device instances (AllocatedResources.Tasks[task].Devices)
// has them reserved in its start worker before every start, also after a
// restart by its restart policy, but not when it is re-attached. The
// reservation's variables go into the task's environment, over its env
// block; a containerd task also gets the device nodes ("devices") and
// mounts ("mounts") in a copy of its driver config, and the reservation's
// IsolatedEnvs (CUDA_VISIBLE_DEVICES 0..n-1), since the container holds
// only its GPUs; an exec task keeps the host's indices. A failed reservation
// fails that start with the plugin's message; an allocation with devices
// on a client without a plugin fails its setup (device_hook.go).
//
// An operator's requests (alloc_ops.go, task_ops.go): SignalAlloc and
// RestartAlloc, answered with AllocOpResponse. The alloc actor checks the
// task (unknown: not_found) and the signal (invalid), picks the task
// actors (the named task; else every running one; AllTasks: every task,
// those that already finished too while the allocation runs) and a
// worker asks each of them (SignalTask, RestartTask, restartAll) and
// answers with the first refusal. restartAll runs a dead task again
// (phase dead -> starting) once the driver's cleanup of its last run is
// done. A task actor records Nomad's
// "Signaling" event and signals in a worker; a restart records "Restart
// Signaled", stops the task (phase restarting) and, at its exit, starts
// it again in the same allocation: the restart policy counts nothing and
// Restarts stays; the sender is answered once the task runs again.
//
// Services and checks (services.go, checks*.go). While the allocation
// runs, its report carries its service registrations
// (Allocation.ServiceRegistrations: host address and port, or the
// allocation's own with address_mode alloc), and none once it stops; the
// servers keep them in raft. It also has one check actor per check
// (checks/<id>), which probes on the injected clock in a worker and
// sends each outcome back; the alloc actor keeps the latest results
// (ChecksRequest answers them) and sends itself ChecksPassing when all
// of them pass, or stop passing: the hook for deployment health. A
// check that fails check_restart.limit times past its grace restarts
// its task through the task actor (RestartTask), as an operator's
// restart does. checkTracker is the pure part, with a table test.
//
// Decisions are plain types tested without an actor system: Lifecycle
// (the allocation's phases and hook order), restartTracker (the task
// restart policy), clientStatus (how task states make an
// allocation's status) and Usage; every retry's delays come from an
// actors.Retry (the lifecycle feeds it the times its events carry).
//
// Durable state lives in the client's state file (runtime/clientstate): a
// task actor restored after an agent restart, or after its alloc actor
// crashed and was restarted by its supervisor, re-attaches to the running
// task through the stored driver handle instead of starting it again. Each
// volume's record (clientstate.VolumeMount) is written before every mount
// or unmount step it guards, so a restarted agent keeps mounts that are
// still there, mounts again what a reboot took, and resumes an unfinished
// unmount; NewUsageFromState rebuilds the Usage that the agent gives its
// usage actor on start.
package alloc
