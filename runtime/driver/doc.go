// Package driver defines the task-driver interface that the alloc actor uses
// to run a task on the host, and an in-memory Fake of it for actor tests.
//
// A driver starts a task from a TaskConfig and returns a TaskHandle. The
// handle is JSON-serialisable: the client stores it in its state file, and
// after an agent restart passes it to RecoverTask on a fresh driver to
// re-attach. WaitTask yields one ExitResult per call, also for recovered
// tasks. StopTask signals the task's process group and escalates to SIGKILL
// after a timeout; DestroyTask forgets a task.
//
// Implementations: runtime/driver/exec (plain processes supervised by an
// executor process that outlives the agent), runtime/driver/containerd
// and Fake:
//
//	f := driver.NewFake()
//	f.NextStartErr = errors.New("boom")  // the next StartTask fails
//	h, _ := f.StartTask(ctx, cfg)       // fails with boom
//	h, _ = f.StartTask(ctx, cfg)        // starts
//	f.Exit(cfg.ID, 3)                   // WaitTask yields ExitCode 3
//	f.Calls(driver.MethodStartTask)     // 2
//
// ParseSignal turns "SIGTERM", "TERM", "sigterm" or "15" into a signal.
//
// What the real drivers share: Tasks is their table of tasks (Task, with
// the driver's own data in Data), with the watcher goroutines that learn
// how tasks end, WaitTask's waiters, StartTask's reservations and
// Shutdown. Its Stop, Signal and Halt are StopTask, SignalTask and the
// first half of DestroyTask, reaching the task's processes through the
// driver's Processes:
//
//	ts := driver.NewTasks[myState](log)
//	t := driver.NewTask(cfg.ID, myState{...}) // set t.Handle, then
//	ts.Watch(t, waitForExit)                  // finishes t with its result
//	ts.Add(t)
//	err := ts.Stop(ctx, cfg.ID, 5*time.Second, "", myProcs{})
//
// Off Linux a driver embeds Unsupported, whose host methods fail with
// ErrNotSupported.
//
// A driver that can run a command inside a running task (`alloc exec`)
// also implements Execer (execer.go); ExecIn calls it, and answers
// ErrExecNotSupported for a driver that does not (containerd, for now).
// One that reports its tasks' resource usage implements Statser
// (stats.go, TaskUsage in Nomad's units); StatsOf calls it, and answers
// ErrStatsNotSupported for one that does not.
package driver
