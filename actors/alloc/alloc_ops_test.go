package alloc

import (
	"syscall"
	"testing"
	"time"

	"github.com/asynkron/protoactor-go/actor"
	"github.com/stretchr/testify/require"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/known/structpb"

	"github.com/troupe-dev/troupe/messages"
	"github.com/troupe-dev/troupe/runtime/driver"
)

// ask sends an operator's request to the allocation's actor and returns
// its answer's error (nil: done).
func (h *harness) ask(a *messages.Allocation, req any) *messages.Error {
	h.t.Helper()
	pid := actor.NewPID("nonhost", "client/allocs/"+a.GetID())
	res, err := h.sys.Root.RequestFuture(pid, req, 5*time.Second).Result()
	require.NoError(h.t, err)
	return res.(*messages.AllocOpResponse).GetError()
}

// twoTasks is testAlloc with a second task, u.
func twoTasks(restart *messages.RestartPolicy) *messages.Allocation {
	a := testAlloc("service", map[string]any{}, restart)
	u := proto.Clone(a.Job.TaskGroups[0].Tasks[0]).(*messages.Task)
	u.Name = "u"
	a.Job.TaskGroups[0].Tasks = append(a.Job.TaskGroups[0].Tasks, u)
	return a
}

func lastEvent(st *messages.TaskState) string {
	if len(st.GetEvents()) == 0 {
		return ""
	}
	return st.Events[len(st.Events)-1].GetType()
}

func TestSignalAlloc(t *testing.T) {
	h := newHarness(t)
	a := twoTasks(nil)
	h.spawn(a)
	h.waitFor("running", status(statusRunning))
	uID := a.ID + "/u"

	require.Nil(t, h.ask(a, &messages.SignalAlloc{Task: "t", Signal: "SIGUSR1"}))
	require.Equal(t, []syscall.Signal{syscall.SIGUSR1}, h.fake.Signals(taskID), "delivered once")
	require.Empty(t, h.fake.Signals(uID), "only to the named task")
	got := h.waitFor("Signaling event", func(a *messages.Allocation) bool { return lastEvent(a.TaskStates["t"]) == eventSignaling })
	ev := got.TaskStates["t"].Events[len(got.TaskStates["t"].Events)-1]
	require.Equal(t, "SIGUSR1", ev.Details["signal"])
	require.True(t, h.fake.Running(taskID), "a signal is no stop")

	// No task: every running task; no signal: SIGKILL, as Nomad's CLI.
	require.Nil(t, h.ask(a, &messages.SignalAlloc{Signal: "HUP"}))
	require.Equal(t, []syscall.Signal{syscall.SIGUSR1, syscall.SIGHUP}, h.fake.Signals(taskID))
	require.Equal(t, []syscall.Signal{syscall.SIGHUP}, h.fake.Signals(uID))
	require.Nil(t, h.ask(a, &messages.SignalAlloc{Task: "u"}))
	require.Equal(t, []syscall.Signal{syscall.SIGHUP, syscall.SIGKILL}, h.fake.Signals(uID))

	cases := []struct {
		name string
		req  *messages.SignalAlloc
		code messages.ErrorCode
	}{
		{"unknown task", &messages.SignalAlloc{Task: "nope", Signal: "SIGUSR1"}, messages.CodeNotFound},
		{"bad signal", &messages.SignalAlloc{Task: "t", Signal: "SIGNOPE"}, messages.CodeInvalid},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			e := h.ask(a, c.req)
			require.NotNil(t, e)
			require.Equal(t, c.code, e.ErrorCode(), e.GetMessage())
		})
	}
	require.Equal(t, 4, h.fake.Calls(driver.MethodSignalTask), "refusals reach no driver")

	h.fake.Inject(func(f *driver.Fake) { f.NextSignalErr = driver.ErrTaskNotFound })
	e := h.ask(a, &messages.SignalAlloc{Task: "t", Signal: "USR2"})
	require.NotNil(t, e)
	require.Contains(t, e.GetMessage(), "task t:")
}

func TestRestartAllocInPlace(t *testing.T) {
	h := newHarness(t)
	// Attempts 0, mode fail: a restart the policy counted would fail the task.
	pol := &messages.RestartPolicy{Attempts: 0, Interval: int64(time.Hour), Delay: int64(time.Second), Mode: "fail"}
	a := testAlloc("service", map[string]any{}, pol)
	h.spawn(a)
	h.waitFor("running", status(statusRunning))
	before, _ := h.fake.Task(taskID)

	require.Nil(t, h.ask(a, &messages.RestartAlloc{Task: "t"}))
	require.Equal(t, 2, h.fake.Calls(driver.MethodStartTask))
	require.Equal(t, 1, h.fake.Calls(driver.MethodStopTask))
	require.True(t, h.fake.Running(taskID))
	after, _ := h.fake.Task(taskID)
	require.Equal(t, before.StdoutPath, after.StdoutPath, "same allocation dir")
	got := h.waitFor("started again", func(a *messages.Allocation) bool {
		st := a.TaskStates["t"]
		return st.GetState() == taskRunning && lastEvent(st) == eventStarted && len(st.GetEvents()) > 2
	})
	st := got.TaskStates["t"]
	require.Zero(t, st.Restarts, "an operator's restart is counted against nothing")
	require.False(t, st.Failed)
	var types []string
	for _, ev := range st.Events {
		types = append(types, ev.Type)
	}
	require.Equal(t, []string{eventReceived, eventStarted, eventRestartSignaled, eventTerminated, eventStarted}, types)
	require.Equal(t, statusRunning, got.ClientStatus)

	// Without a task: every running one; again and again, never counted.
	require.Nil(t, h.ask(a, &messages.RestartAlloc{}))
	require.Nil(t, h.ask(a, &messages.RestartAlloc{AllTasks: true}))
	require.Equal(t, 4, h.fake.Calls(driver.MethodStartTask))
	require.True(t, h.fake.Running(taskID))

	cases := []struct {
		name string
		req  *messages.RestartAlloc
		code messages.ErrorCode
	}{
		{"unknown task", &messages.RestartAlloc{Task: "nope"}, messages.CodeNotFound},
		{"task and all tasks", &messages.RestartAlloc{Task: "t", AllTasks: true}, messages.CodeInvalid},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			e := h.ask(a, c.req)
			require.NotNil(t, e)
			require.Equal(t, c.code, e.ErrorCode(), e.GetMessage())
		})
	}
	require.Equal(t, 4, h.fake.Calls(driver.MethodStartTask))
}

func TestRestartAllocRefusesDeadTask(t *testing.T) {
	h := newHarness(t)
	a := testAlloc("batch", map[string]any{"exit_code": 0}, nil)
	h.spawn(a)
	h.waitFor("complete", status(statusComplete))
	for _, req := range []*messages.RestartAlloc{{Task: "t"}, {AllTasks: true}} {
		e := h.ask(a, req)
		if e != nil { // the actor may be gone with its tasks: then no answer at all
			require.NotEqual(t, "", e.GetMessage())
		}
	}
	require.Equal(t, 1, h.fake.Calls(driver.MethodStartTask), "a finished allocation runs nothing again")
}

// TestRestartAllTasksRunsFinishedOnes: -all-tasks restarts the running
// task in place and runs again the one that already finished (a batch
// task that exited 0 beside a running one); neither counts as a
// restart. A plain restart leaves the finished task alone.
func TestRestartAllTasksRunsFinishedOnes(t *testing.T) {
	h := newHarness(t)
	a := twoTasks(nil)
	a.Job.Type = "batch"
	done, _ := structpb.NewStruct(map[string]any{"exit_code": 0})
	a.Job.TaskGroups[0].Tasks[0].Config = done // t exits 0 at once; u runs on
	h.spawn(a)
	h.waitFor("t done, u running", func(a *messages.Allocation) bool {
		return a.TaskStates["t"].GetState() == taskDead && a.TaskStates["u"].GetState() == taskRunning
	})
	require.Equal(t, 2, h.fake.Calls(driver.MethodStartTask))

	require.Nil(t, h.ask(a, &messages.RestartAlloc{}), "a plain restart: the running ones")
	require.Equal(t, 3, h.fake.Calls(driver.MethodStartTask), "the finished task is not run again")

	require.Nil(t, h.ask(a, &messages.RestartAlloc{AllTasks: true}))
	require.Equal(t, 5, h.fake.Calls(driver.MethodStartTask), "both tasks started again")
	require.True(t, h.fake.Running(a.ID+"/u"))
	got := h.waitFor("t ran again", func(a *messages.Allocation) bool {
		evs := a.TaskStates["t"].GetEvents()
		n := 0
		for _, ev := range evs {
			if ev.GetType() == eventStarted {
				n++
			}
		}
		return n == 2 && a.TaskStates["t"].GetState() == taskDead && a.ClientStatus == statusRunning
	})
	for _, task := range []string{"t", "u"} {
		st := got.TaskStates[task]
		require.Zero(t, st.GetRestarts(), "task %s: counted against nothing", task)
		require.False(t, st.GetFailed())
	}
	var types []string
	for _, ev := range got.TaskStates["t"].Events {
		types = append(types, ev.Type)
	}
	require.Contains(t, types, eventRestartSignaled)
}
