package scheduler

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"github.com/troupe-dev/troupe/messages"
)

func trackedAlloc(failAt time.Time, events ...*messages.RescheduleEvent) *messages.Allocation {
	return &messages.Allocation{ID: "a", NodeID: "n", ClientStatus: messages.AllocClientStatusFailed,
		ModifyTime:        failAt.UnixNano(),
		RescheduleTracker: &messages.RescheduleTracker{Events: events}}
}

func ev(ago, delay time.Duration) *messages.RescheduleEvent {
	return &messages.RescheduleEvent{RescheduleTime: testNow.Add(-ago).UnixNano(), Delay: int64(delay)}
}

func TestNextDelay(t *testing.T) {
	s := time.Second
	cases := []struct {
		name   string
		fn     string
		max    time.Duration
		events []*messages.RescheduleEvent
		want   time.Duration
	}{
		{"first attempt", "exponential", 0, nil, 5 * s},
		{"constant", "constant", 0, []*messages.RescheduleEvent{ev(time.Minute, 5*s)}, 5 * s},
		{"exponential doubles", "exponential", 0, []*messages.RescheduleEvent{ev(time.Minute, 20*s)}, 40 * s},
		{"exponential capped", "exponential", time.Minute, []*messages.RescheduleEvent{ev(10*s, 40*s)}, time.Minute},
		{"cap resets after a long run", "exponential", time.Minute,
			[]*messages.RescheduleEvent{ev(time.Hour, 40*s)}, 5 * s},
		{"fibonacci one event", "fibonacci", 0, []*messages.RescheduleEvent{ev(time.Minute, 5*s)}, 5 * s},
		{"fibonacci sums", "fibonacci", 0,
			[]*messages.RescheduleEvent{ev(time.Minute, 5*s), ev(30*s, 10*s)}, 15 * s},
		{"fibonacci restarts after reset", "fibonacci", time.Minute,
			[]*messages.RescheduleEvent{ev(time.Minute, time.Minute), ev(10*s, 5*s)}, 5 * s},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			p := &messages.ReschedulePolicy{Attempts: 10, Interval: int64(24 * time.Hour),
				Delay: int64(5 * s), DelayFunction: tc.fn, MaxDelay: int64(tc.max)}
			a := trackedAlloc(testNow, tc.events...)
			require.Equal(t, tc.want, nextDelay(a, p, testNow))
		})
	}
}

func TestRescheduleEligibility(t *testing.T) {
	h := time.Hour
	cases := []struct {
		name   string
		policy *messages.ReschedulePolicy
		events []*messages.RescheduleEvent
		want   bool
	}{
		{"no policy", nil, nil, false},
		{"zero attempts", &messages.ReschedulePolicy{Interval: int64(h)}, nil, false},
		{"first attempt", &messages.ReschedulePolicy{Attempts: 1, Interval: int64(h)}, nil, true},
		{"used up", &messages.ReschedulePolicy{Attempts: 1, Interval: int64(h)},
			[]*messages.RescheduleEvent{ev(10*time.Minute, 0)}, false},
		{"old attempt outside interval", &messages.ReschedulePolicy{Attempts: 1, Interval: int64(h)},
			[]*messages.RescheduleEvent{ev(2*h, 0)}, true},
		{"unlimited", &messages.ReschedulePolicy{Unlimited: true},
			[]*messages.RescheduleEvent{ev(time.Minute, 0), ev(time.Second, 0)}, true},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			a := trackedAlloc(testNow, tc.events...)
			_, ok := rescheduleTime(a, tc.policy, testNow)
			require.Equal(t, tc.want, ok)
		})
	}
}

func TestLastEventTimeUsesTaskFinish(t *testing.T) {
	a := trackedAlloc(testNow.Add(-time.Hour))
	a.TaskStates = map[string]*messages.TaskState{
		"a": {FinishedAt: testNow.Add(-2 * time.Minute).Format(time.RFC3339Nano)},
		"b": {FinishedAt: testNow.Add(-time.Minute).Format(time.RFC3339Nano)},
	}
	require.Equal(t, testNow.Add(-time.Minute), lastEventTime(a, testNow).UTC())
	require.Equal(t, testNow, lastEventTime(&messages.Allocation{}, testNow))
}

func TestNextTrackerKeepsRecentEvents(t *testing.T) {
	p := &messages.ReschedulePolicy{Attempts: 3, Interval: int64(time.Hour), Delay: int64(time.Second)}
	prev := trackedAlloc(testNow, ev(2*time.Hour, time.Second), ev(time.Minute, time.Second))
	tr := nextTracker(prev, p, testNow)
	require.Len(t, tr.Events, 2)
	require.Equal(t, "a", tr.Events[1].PrevAllocID)
	require.Equal(t, testNow.UnixNano(), tr.Events[1].RescheduleTime)
}

func TestFollowupEvalsAreBatched(t *testing.T) {
	job := testJob("web", jobTypeService, 3)
	job.TaskGroups[0].ReschedulePolicy = policy(3, time.Minute)
	s := newMemSnapshot(testNodes(3), job)
	for i, ago := range []time.Duration{10 * time.Second, 8 * time.Second, 0} {
		a := testAlloc(job, "n00", uint32(i))
		a.ClientStatus, a.ModifyTime = messages.AllocClientStatusFailed, testNow.Add(-ago).UnixNano()
		s.AddAlloc(a)
	}
	plan := mustProcess(t, s, testEval(job), 1)
	require.Empty(t, plan.Place)
	require.Len(t, plan.NewEvals, 2)
	require.Equal(t, testNow.Add(52*time.Second).UnixNano(), plan.NewEvals[0].WaitUntil,
		"the batch waits for its latest alloc")
	require.Equal(t, testNow.Add(time.Minute).UnixNano(), plan.NewEvals[1].WaitUntil)
}

// TestFollowupEvalNamesTheFailure: a delayed reschedule's eval says which
// allocation it replaces and why it failed (a csi volume's setup error
// names the volume and the plugin's answer).
func TestFollowupEvalNamesTheFailure(t *testing.T) {
	job := testJob("web", jobTypeService, 2)
	job.TaskGroups[0].ReschedulePolicy = policy(3, time.Minute)
	s := newMemSnapshot(testNodes(3), job)
	var ids []string
	for i := range 2 {
		a := testAlloc(job, "n00", uint32(i))
		a.ClientStatus, a.ModifyTime = messages.AllocClientStatusFailed, testNow.UnixNano()
		a.ClientDescription = `setup failed: CSI volume "vol0": NodePublishVolume: rpc error: code = FailedPrecondition desc = not ready`
		s.AddAlloc(a)
		ids = append(ids, a.ID)
	}
	plan := mustProcess(t, s, testEval(job), 1)
	require.Len(t, plan.NewEvals, 1)
	desc := plan.NewEvals[0].StatusDescription
	require.Contains(t, desc, delayedDescription+" of allocation ")
	require.Contains(t, desc, `(failed: setup failed: CSI volume "vol0": NodePublishVolume: rpc error`)
	require.Contains(t, desc, " and 1 more")
	require.True(t, desc == delayedWhy([]delayed{{alloc: s.Alloc(ids[0])}, {}}) ||
		desc == delayedWhy([]delayed{{alloc: s.Alloc(ids[1])}, {}}), desc)
}
