package alloc

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/troupe-dev/troupe/messages"
	"github.com/troupe-dev/troupe/runtime/driver"
)

func TestTaskTransitionTable(t *testing.T) {
	legal := map[[2]taskPhase]bool{}
	for from, tos := range taskTransitions {
		for _, to := range tos {
			legal[[2]taskPhase{from, to}] = true
		}
	}
	for from := taskPhasePending; from <= taskPhaseDead; from++ {
		for to := taskPhasePending; to <= taskPhaseDead; to++ {
			require.Equal(t, legal[[2]taskPhase{from, to}], canTaskTransition(from, to), "%s -> %s", from, to)
		}
	}
	require.True(t, canTaskTransition(taskPhaseDead, taskPhaseStarting), "only an operator's restart of all tasks")
	require.False(t, canTaskTransition(taskPhaseDead, taskPhaseRunning))
	require.True(t, canTaskTransition(taskPhaseRunning, taskPhaseRestarting))
	require.Equal(t, "recovering", taskPhaseRecovering.String())
}

func TestClientStatus(t *testing.T) {
	st := func(s string, failed bool) *messages.TaskState { return &messages.TaskState{State: s, Failed: failed} }
	cases := []struct {
		name   string
		states map[string]*messages.TaskState
		want   string
	}{
		{"none started", map[string]*messages.TaskState{}, statusPending},
		{"one running one pending", map[string]*messages.TaskState{"a": st(taskRunning, false), "b": st(taskPending, false)}, statusPending},
		{"all running", map[string]*messages.TaskState{"a": st(taskRunning, false), "b": st(taskRunning, false)}, statusRunning},
		{"one done one running", map[string]*messages.TaskState{"a": st(taskDead, false), "b": st(taskRunning, false)}, statusRunning},
		{"all done", map[string]*messages.TaskState{"a": st(taskDead, false), "b": st(taskDead, false)}, statusComplete},
		{"one failed", map[string]*messages.TaskState{"a": st(taskDead, true), "b": st(taskRunning, false)}, statusFailed},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			require.Equal(t, c.want, clientStatus([]string{"a", "b"}, c.states))
		})
	}
}

func TestRestartTracker(t *testing.T) {
	now := time.Unix(0, 0)
	pol := &messages.RestartPolicy{Attempts: 2, Interval: int64(time.Minute), Delay: int64(5 * time.Second), Mode: "fail"}
	fail := &driver.ExitResult{ExitCode: 1}
	ok := &driver.ExitResult{}

	t.Run("batch success completes", func(t *testing.T) {
		d := newRestartTracker(pol, "batch").Next(ok, now)
		require.False(t, d.Restart)
		require.False(t, d.Failed)
	})
	t.Run("service success restarts", func(t *testing.T) {
		require.True(t, newRestartTracker(pol, "service").Next(ok, now).Restart)
	})
	t.Run("attempts then fail", func(t *testing.T) {
		r := newRestartTracker(pol, "service")
		require.True(t, r.Next(fail, now).Restart)
		require.True(t, r.Next(fail, now.Add(time.Second)).Restart)
		d := r.Next(fail, now.Add(2*time.Second))
		require.True(t, d.Failed)
		require.Contains(t, d.Reason, "Exit Code: 1")
	})
	t.Run("interval resets the count", func(t *testing.T) {
		r := newRestartTracker(pol, "service")
		r.Next(fail, now)
		r.Next(fail, now.Add(time.Second))
		require.True(t, r.Next(fail, now.Add(2*time.Minute)).Restart)
	})
	t.Run("delay mode waits for the interval", func(t *testing.T) {
		p := &messages.RestartPolicy{Attempts: 1, Interval: int64(time.Minute), Delay: int64(time.Second), Mode: "delay"}
		r := newRestartTracker(p, "service")
		require.Equal(t, time.Second, r.Next(fail, now).Delay)
		d := r.Next(fail, now.Add(10*time.Second))
		require.True(t, d.Restart)
		require.Equal(t, 50*time.Second, d.Delay)
	})
	t.Run("start failure counts", func(t *testing.T) {
		r := newRestartTracker(&messages.RestartPolicy{Attempts: 0, Mode: "fail"}, "service")
		d := r.Next(nil, now)
		require.True(t, d.Failed)
		require.Contains(t, d.Reason, "failed to start")
	})
}
