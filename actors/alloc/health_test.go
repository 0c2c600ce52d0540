package alloc

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/troupe-dev/troupe/messages"
)

func TestHealthTracker(t *testing.T) {
	t0 := time.Unix(1_700_000_000, 0)
	running := &messages.TaskState{State: messages.TaskStateRunning}
	pending := &messages.TaskState{State: messages.TaskStatePending}
	failed := &messages.TaskState{State: messages.TaskStateDead, Failed: true}
	u := func(check string) *messages.UpdateStrategy {
		return &messages.UpdateStrategy{MaxParallel: 1, HealthCheck: check,
			MinHealthyTime: int64(10 * time.Second), HealthyDeadline: int64(time.Minute)}
	}
	type obs struct {
		at     time.Duration
		states map[string]*messages.TaskState
		checks *bool
	}
	no := false
	for _, tc := range []struct {
		name   string
		check  string
		steps  []obs
		want   *bool // nil: undecided
		wantAt time.Duration
		nextAt time.Duration // after the last step, when undecided
	}{
		{"healthy after min_healthy_time running", messages.HealthCheckTaskStates,
			[]obs{{0, map[string]*messages.TaskState{"a": running, "b": running}, nil}, {10 * time.Second, map[string]*messages.TaskState{"a": running, "b": running}, nil}},
			new(true), 10 * time.Second, 0},
		{"waits while one task is pending", messages.HealthCheckTaskStates,
			[]obs{{0, map[string]*messages.TaskState{"a": running, "b": pending}, nil}},
			nil, 0, time.Minute},
		{"a restart starts min_healthy_time again", messages.HealthCheckTaskStates,
			[]obs{{0, map[string]*messages.TaskState{"a": running}, nil}, {5 * time.Second, map[string]*messages.TaskState{"a": pending}, nil},
				{6 * time.Second, map[string]*messages.TaskState{"a": running}, nil}, {12 * time.Second, map[string]*messages.TaskState{"a": running}, nil}},
			nil, 0, 16 * time.Second},
		{"a failed task is unhealthy", messages.HealthCheckTaskStates,
			[]obs{{3 * time.Second, map[string]*messages.TaskState{"a": failed}, nil}},
			new(false), 3 * time.Second, 0},
		{"the healthy deadline passes", messages.HealthCheckTaskStates,
			[]obs{{0, map[string]*messages.TaskState{"a": pending}, nil}, {time.Minute, map[string]*messages.TaskState{"a": pending}, nil}},
			new(false), time.Minute, 0},
		{"checks: failing checks hold health", messages.HealthCheckChecks,
			[]obs{{0, map[string]*messages.TaskState{"a": running}, &no}, {30 * time.Second, map[string]*messages.TaskState{"a": running}, nil}},
			nil, 0, time.Minute},
		{"checks: no checks count as passing", messages.HealthCheckChecks,
			[]obs{{0, map[string]*messages.TaskState{"a": running}, nil}, {10 * time.Second, map[string]*messages.TaskState{"a": running}, nil}},
			new(true), 10 * time.Second, 0},
		{"manual: never decided here", messages.HealthCheckManual,
			[]obs{{0, map[string]*messages.TaskState{"a": running}, nil}, {50 * time.Second, map[string]*messages.TaskState{"a": running}, nil}},
			nil, 0, -1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h := newHealthTracker(u(tc.check), t0)
			var next time.Time
			for _, o := range tc.steps {
				if o.checks != nil {
					h.checksOK = *o.checks
				}
				tasks := make([]string, 0, len(o.states))
				for name := range o.states {
					tasks = append(tasks, name)
				}
				next = h.observe(t0.Add(o.at), tasks, o.states)
			}
			st := h.status(false)
			if tc.want == nil {
				require.Nil(t, st)
				if tc.nextAt < 0 {
					require.True(t, next.IsZero())
				} else {
					require.Equal(t, t0.Add(tc.nextAt), next)
				}
				return
			}
			require.NotNil(t, st)
			require.Equal(t, *tc.want, st.GetHealthy())
			require.Equal(t, t0.Add(tc.wantAt).UnixNano(), st.Timestamp)
		})
	}
}
