package alloc

import (
	"path/filepath"
	"testing"
	"time"

	"github.com/asynkron/protoactor-go/actor"
	"github.com/stretchr/testify/require"
	"google.golang.org/protobuf/proto"

	"github.com/troupe-dev/troupe/actors"
	"github.com/troupe-dev/troupe/messages"
	"github.com/troupe-dev/troupe/runtime/driver"
)

func lifecycleTask(name, hook string, sidecar bool) *messages.Task {
	t := &messages.Task{Name: name, Driver: "fake", Resources: &messages.Resources{CPU: 100, MemoryMB: 64}}
	if hook != hookMain {
		t.Lifecycle = &messages.TaskLifecycle{Hook: hook, Sidecar: sidecar}
	}
	return t
}

func st(state string, failed bool) *messages.TaskState {
	return &messages.TaskState{State: state, Failed: failed}
}

// TestTaskOrderPhases walks a group with every kind of task through its
// phases and checks what starts when.
func TestTaskOrderPhases(t *testing.T) {
	o := newTaskOrder([]*messages.Task{
		lifecycleTask("init", hookPrestart, false), lifecycleTask("proxy", hookPrestart, true),
		lifecycleTask("main", hookMain, false), lifecycleTask("after", hookPoststart, false),
		lifecycleTask("log", hookPoststart, true), lifecycleTask("clean", hookPoststop, false),
	})
	states := map[string]*messages.TaskState{}
	steps := []struct {
		name  string
		set   map[string]*messages.TaskState
		want  orderStep
		phase string
	}{
		{"prestart tasks first", nil, orderStep{Start: []string{"init", "proxy"}}, ""},
		{"init runs, proxy runs: main waits for init", map[string]*messages.TaskState{
			"init": st(taskRunning, false), "proxy": st(taskRunning, false)}, orderStep{}, ""},
		{"init done: main starts", map[string]*messages.TaskState{"init": st(taskDead, false)},
			orderStep{Start: []string{"main"}}, ""},
		{"main pending: poststart waits", map[string]*messages.TaskState{"main": st(taskPending, false)}, orderStep{}, ""},
		{"main runs: poststart starts", map[string]*messages.TaskState{"main": st(taskRunning, false)},
			orderStep{Start: []string{"after", "log"}}, ""},
		{"after done, main still runs", map[string]*messages.TaskState{
			"after": st(taskDead, false), "log": st(taskRunning, false)}, orderStep{}, ""},
		{"main done: sidecars are stopped", map[string]*messages.TaskState{"main": st(taskDead, false)},
			orderStep{MainDead: true}, ""},
		{"asked once", nil, orderStep{}, ""},
		{"sidecars dead: poststop starts", map[string]*messages.TaskState{
			"proxy": st(taskDead, false), "log": st(taskDead, false)}, orderStep{Start: []string{"clean"}}, ""},
	}
	for _, s := range steps {
		for k, v := range s.set {
			states[k] = v
		}
		got := o.Next(states, nil)
		require.Equal(t, s.want, got, s.name)
	}
}

// TestTaskOrderKillSkipsUnstarted: a failed prestart stops the allocation:
// the main and poststart tasks never start, the poststop ones still run.
func TestTaskOrderKillSkipsUnstarted(t *testing.T) {
	o := newTaskOrder([]*messages.Task{lifecycleTask("init", hookPrestart, false),
		lifecycleTask("main", hookMain, false), lifecycleTask("after", hookPoststart, false),
		lifecycleTask("clean", hookPoststop, false)})
	require.Equal(t, orderStep{Start: []string{"init"}}, o.Next(map[string]*messages.TaskState{}, nil))
	states := map[string]*messages.TaskState{"init": st(taskDead, true)}
	require.Equal(t, orderStep{}, o.Next(states, nil), "a failed prestart starts nothing")
	o.Kill()
	require.Equal(t, orderStep{Skip: []string{"main", "after"}, Start: []string{"clean"}}, o.Next(states, nil))
	require.Equal(t, statusPending, o.clientStatus([]string{"init", "main"}, map[string]*messages.TaskState{}))
}

// TestTaskOrderResumed: tasks that ran before an agent restart are spawned
// again at once, whatever their turn.
func TestTaskOrderResumed(t *testing.T) {
	o := newTaskOrder([]*messages.Task{lifecycleTask("init", hookPrestart, false),
		lifecycleTask("main", hookMain, false), lifecycleTask("clean", hookPoststop, false)})
	states := map[string]*messages.TaskState{"init": st(taskDead, false), "main": st(taskRunning, false)}
	require.Equal(t, orderStep{Start: []string{"init", "main"}},
		o.Next(states, map[string]bool{"init": true, "main": true}))
	require.Equal(t, orderStep{}, o.Next(states, nil))
}

// TestTaskOrderWaitsForRestartedSidecar: main tasks held by a restart of
// all tasks wait for a prestart sidecar that was asked to restart: while
// it still says running after its Restart Signaled event, it is not up;
// once it started again, it is.
func TestTaskOrderWaitsForRestartedSidecar(t *testing.T) {
	o := newTaskOrder([]*messages.Task{lifecycleTask("proxy", hookPrestart, true), lifecycleTask("main", hookMain, false)})
	ev := func(types ...string) []*messages.TaskEvent {
		var out []*messages.TaskEvent
		for _, typ := range types {
			out = append(out, &messages.TaskEvent{Type: typ})
		}
		return out
	}
	running := func(events ...string) *messages.TaskState {
		return &messages.TaskState{State: taskRunning, Events: ev(events...)}
	}
	states := map[string]*messages.TaskState{"proxy": running(eventStarted)}
	require.Equal(t, orderStep{Start: []string{"proxy", "main"}}, o.Next(states, nil))
	o.Rerun([]string{"main"})
	states["main"] = st(taskPending, false)
	states["proxy"] = running(eventStarted, eventRestartSignaled)
	require.Equal(t, orderStep{}, o.Next(states, nil), "the sidecar is restarting: main waits")
	states["proxy"] = running(eventStarted, eventRestartSignaled, eventTerminated, eventStarted)
	require.Equal(t, orderStep{Start: []string{"main"}}, o.Next(states, nil), "the sidecar runs again: main starts")
}

func lifecycleAlloc(jobType string, tasks ...*messages.Task) *messages.Allocation {
	a := testAlloc(jobType, map[string]any{}, &messages.RestartPolicy{Attempts: 0, Interval: int64(time.Hour),
		Delay: int64(time.Second), Mode: "fail"})
	pol := a.Job.TaskGroups[0].Tasks[0].RestartPolicy
	for _, t := range tasks {
		t.RestartPolicy = pol
	}
	a.Job.TaskGroups[0].Tasks = tasks
	return a
}

func (h *harness) started(a *messages.Allocation, task string) bool {
	_, ok := h.fake.Task(a.ID + "/" + task)
	return ok
}

func (h *harness) exit(a *messages.Allocation, task string, code int) {
	h.t.Helper()
	require.NoError(h.t, h.fake.Exit(a.ID+"/"+task, code))
}

func taskIs(task, state string) func(*messages.Allocation) bool {
	return func(a *messages.Allocation) bool { return a.TaskStates[task].GetState() == state }
}

// TestAllocLifecycleBatch runs a batch allocation with a prestart task, a
// prestart sidecar, a main task, a poststart task and a poststop task
// through its phases with the fake driver.
func TestAllocLifecycleBatch(t *testing.T) {
	h := newHarness(t)
	a := lifecycleAlloc("batch", lifecycleTask("init", hookPrestart, false), lifecycleTask("proxy", hookPrestart, true),
		lifecycleTask("main", hookMain, false), lifecycleTask("after", hookPoststart, false),
		lifecycleTask("clean", hookPoststop, false))
	h.spawn(a)
	r := h.waitFor("prestart tasks running", func(r *messages.Allocation) bool {
		return taskIs("init", taskRunning)(r) && taskIs("proxy", taskRunning)(r)
	})
	require.Equal(t, taskPending, r.TaskStates["main"].GetState())
	require.Equal(t, eventReceived, r.TaskStates["main"].Events[0].Type)
	require.Equal(t, statusRunning, r.ClientStatus, "Nomad: running once a task runs")
	require.False(t, h.started(a, "main"), "main waits for the prestart task")

	h.exit(a, "init", 0)
	h.waitFor("main running", taskIs("main", taskRunning))
	r = h.waitFor("poststart running", taskIs("after", taskRunning))
	require.Equal(t, statusRunning, r.ClientStatus, "a waiting poststop task keeps nothing pending")
	require.False(t, h.started(a, "clean"))
	require.True(t, h.fake.Running(a.ID+"/proxy"))

	h.exit(a, "after", 0)
	h.exit(a, "main", 0)
	r = h.waitFor("sidecar stopped", taskIs("proxy", taskDead))
	require.False(t, r.TaskStates["proxy"].Failed)
	h.waitFor("poststop running", taskIs("clean", taskRunning))
	h.exit(a, "clean", 0)
	done := h.waitFor("complete", status(statusComplete))
	for _, task := range []string{"init", "proxy", "main", "after", "clean"} {
		require.Equal(t, taskDead, done.TaskStates[task].State, task)
		require.False(t, done.TaskStates[task].Failed, task)
	}
}

// TestAllocLifecycleFailedPrestart: a prestart task that fails (its
// restart policy spent) fails the allocation; the main task never starts,
// the poststop task still runs.
func TestAllocLifecycleFailedPrestart(t *testing.T) {
	h := newHarness(t)
	a := lifecycleAlloc("batch", lifecycleTask("init", hookPrestart, false),
		lifecycleTask("main", hookMain, false), lifecycleTask("clean", hookPoststop, false))
	h.spawn(a)
	h.waitFor("prestart running", taskIs("init", taskRunning))
	h.exit(a, "init", 3)
	h.waitFor("poststop running", taskIs("clean", taskRunning))
	h.exit(a, "clean", 0)
	done := h.waitFor("failed", func(r *messages.Allocation) bool {
		return r.ClientStatus == statusFailed && taskIs("clean", taskDead)(r)
	})
	require.False(t, h.started(a, "main"))
	require.True(t, done.TaskStates["init"].Failed)
	mainState := done.TaskStates["main"]
	require.Equal(t, taskDead, mainState.State)
	require.Equal(t, eventKilled, mainState.Events[len(mainState.Events)-1].Type)
}

// TestAllocLifecycleStopRunsPoststop: a stopped service allocation kills
// its main task and sidecar, then runs its poststop task.
func TestAllocLifecycleStopRunsPoststop(t *testing.T) {
	h := newHarness(t)
	a := lifecycleAlloc("service", lifecycleTask("proxy", hookPrestart, true),
		lifecycleTask("main", hookMain, false), lifecycleTask("clean", hookPoststop, false))
	h.spawn(a)
	h.waitFor("running", status(statusRunning))
	require.False(t, h.started(a, "clean"))
	stop := proto.Clone(a).(*messages.Allocation)
	stop.DesiredStatus = "stop"
	h.sys.Root.Send(actor.NewPID("nonhost", "client/allocs/"+a.ID), &messages.UpdateAlloc{Alloc: stop})
	h.waitFor("poststop running", taskIs("clean", taskRunning))
	require.False(t, h.fake.Running(a.ID+"/main"))
	require.False(t, h.fake.Running(a.ID+"/proxy"))
	h.exit(a, "clean", 0)
	h.waitFor("complete", status(statusComplete))
}

// TestAllocLifecycleLeader: a leader's exit stops the other tasks.
func TestAllocLifecycleLeader(t *testing.T) {
	h := newHarness(t)
	lead := lifecycleTask("lead", hookMain, false)
	lead.Leader = true
	a := lifecycleAlloc("batch", lead, lifecycleTask("other", hookMain, false))
	h.spawn(a)
	h.waitFor("running", status(statusRunning))
	h.exit(a, "lead", 0)
	done := h.waitFor("complete", status(statusComplete))
	require.False(t, h.fake.Running(a.ID+"/other"))
	require.False(t, done.TaskStates["other"].Failed)
}

// TestLifecycleRestartOnSuccess: as Nomad's restart tracker, a prestart
// task that is no sidecar and a poststop task are done when they exit 0,
// in a service job too; a sidecar is restarted, even in a batch job.
func TestLifecycleRestartOnSuccess(t *testing.T) {
	pol := &messages.RestartPolicy{Attempts: 1, Interval: int64(time.Hour), Delay: int64(time.Second), Mode: "fail"}
	ok := &driver.ExitResult{}
	now := time.Unix(1_700_000_000, 0)
	cases := []struct {
		job     string
		lc      *messages.TaskLifecycle
		restart bool
	}{
		{"service", &messages.TaskLifecycle{Hook: hookPrestart}, false},
		{"service", &messages.TaskLifecycle{Hook: hookPoststop}, false},
		{"service", &messages.TaskLifecycle{Hook: hookPoststart}, true},
		{"batch", &messages.TaskLifecycle{Hook: hookPrestart, Sidecar: true}, true},
		{"batch", nil, false},
	}
	for _, c := range cases {
		d := newRestartTracker(pol, c.job).forLifecycle(c.lc).Next(ok, now)
		require.Equal(t, c.restart, d.Restart, "%s %v", c.job, c.lc)
	}
}

// TestAllocLifecycleAgentRestart: after an agent restart the finished
// prestart task is not run again, the running main task is recovered (not
// started again), and the poststop task still waits for it.
func TestAllocLifecycleAgentRestart(t *testing.T) {
	dbPath, root := filepath.Join(t.TempDir(), "client.db"), t.TempDir()
	drv, clock := driver.NewFake(), actors.NewFakeClock(time.Unix(1_700_000_000, 0))
	h := newHarnessAt(t, dbPath, root, drv, clock)
	a := lifecycleAlloc("batch", lifecycleTask("init", hookPrestart, false),
		lifecycleTask("main", hookMain, false), lifecycleTask("clean", hookPoststop, false))
	h.spawn(a)
	h.waitFor("prestart running", taskIs("init", taskRunning))
	h.exit(a, "init", 0)
	h.waitFor("main running", taskIs("main", taskRunning))
	h.db.Flush()
	h.close() // the agent stops; the main task keeps running

	h = newHarnessAt(t, dbPath, root, drv, clock)
	h.spawn(a)
	require.Eventually(t, func() bool { return drv.Calls(driver.MethodRecoverTask) == 1 }, 5*time.Second, time.Millisecond)
	h.waitFor("running again", status(statusRunning))
	require.Equal(t, 2, drv.Calls(driver.MethodStartTask), "init and main started once each")
	require.False(t, h.started(a, "clean"))
	h.exit(a, "main", 0)
	h.waitFor("poststop running", taskIs("clean", taskRunning))
	h.exit(a, "clean", 0)
	h.waitFor("complete", status(statusComplete))
}
