package server

import (
	"fmt"
	"sort"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"google.golang.org/protobuf/proto"

	"github.com/troupe-dev/troupe/actors/server/periodic"
	"github.com/troupe-dev/troupe/messages"
)

// periodicJob is a batch job launched by cron (every minute by default).
func periodicJob(id string, overlap bool, specs ...string) *messages.Job {
	if len(specs) == 0 {
		specs = []string{"* * * * *"}
	}
	j := testJob(id, "batch")
	j.Periodic = &messages.PeriodicConfig{Enabled: true, Specs: specs, SpecType: "cron", TimeZone: "UTC", ProhibitOverlap: overlap}
	return j
}

// registerAt commits a job registration stamped with the clock's time.
func (h *harness) registerAt(j *messages.Job) {
	h.t.Helper()
	cmd := registerJob(j)
	cmd.Time = h.clock.Now().UnixNano()
	h.apply(cmd)
}

// children are the IDs of the job's children, sorted.
func (h *harness) children(id string) []string {
	var out []string
	for _, c := range h.store.Snapshot().ChildJobs("default", id) {
		out = append(out, c.GetID())
	}
	sort.Strings(out)
	return out
}

// waitChildren waits until the job has n children.
func (h *harness) waitChildren(id string, n int) {
	h.t.Helper()
	require.Eventually(h.t, func() bool { return len(h.children(id)) == n }, 5*time.Second, time.Millisecond,
		"%d children of %s", n, id)
}

// nextMinute advances the clock to the next whole minute.
func (h *harness) nextMinute() time.Time {
	now := h.clock.Now()
	next := now.Truncate(time.Minute).Add(time.Minute)
	h.clock.Advance(next.Sub(now))
	return next
}

// TestPeriodicEveryMinuteForAnHour: a cron every minute launches exactly
// one child per minute, named after its minute, and records each launch.
func TestPeriodicEveryMinuteForAnHour(t *testing.T) {
	h := newHarness(t, nil)
	h.lead()
	h.registerAt(periodicJob("report", false))
	var want []string
	for i := 1; i <= 60; i++ {
		at := h.nextMinute()
		want = append(want, periodic.ChildID("report", at))
		h.waitChildren("report", i)
	}
	sort.Strings(want)
	require.Equal(t, want, h.children("report"))
	snap := h.store.Snapshot()
	require.Equal(t, h.clock.Now().UnixNano(), snap.PeriodicLaunch("default", "report").GetLaunch())
	for _, id := range want {
		c := snap.JobByID("default", id)
		require.Equal(t, "report", c.GetParentID())
		require.Nil(t, c.GetPeriodic(), "a child is not periodic itself")
		var launches int
		for _, e := range snap.EvalsByJob("default", id) {
			if e.GetTriggeredBy() == "periodic-job" {
				launches++
			}
		}
		require.Equal(t, 1, launches, "each child has its evaluation")
	}
	require.Empty(t, snap.EvalsByJob("default", "report"), "registering a periodic job evaluates nothing")
	require.Equal(t, messages.JobStatusRunning, snap.JobByID("default", "report").GetStatus())
}

// TestPeriodicProhibitOverlap: while a child is not dead, the next launch
// is skipped; once it is dead, launches resume.
func TestPeriodicProhibitOverlap(t *testing.T) {
	h := newHarness(t, nil)
	h.lead()
	h.registerAt(periodicJob("once", true))
	h.nextMinute()
	h.waitChildren("once", 1)
	first := h.children("once")[0]
	h.nextMinute() // the first child's evaluation is still open: skipped
	h.nextMinute()
	require.Never(t, func() bool { return len(h.children("once")) > 1 }, 100*time.Millisecond, 5*time.Millisecond)

	stop := registerJob(func() *messages.Job {
		j := proto.Clone(h.store.Snapshot().JobByID("default", first)).(*messages.Job) // stored jobs are shared
		j.Stop = true
		return j
	}())
	stop.Time = h.clock.Now().UnixNano()
	h.apply(stop)
	require.Equal(t, messages.JobStatusDead, h.store.Snapshot().JobByID("default", first).GetStatus())
	at := h.nextMinute()
	h.waitChildren("once", 2)
	require.Contains(t, h.children("once"), periodic.ChildID("once", at))
}

// TestPeriodicMissedLaunchesRunOnce: the times passed while no server
// led are launched once, as the latest of them, when one leads; then the
// cron goes on.
func TestPeriodicMissedLaunchesRunOnce(t *testing.T) {
	h := newHarness(t, nil)
	h.registerAt(periodicJob("nightly", false))
	for range 30 {
		h.nextMinute()
	}
	missed := h.clock.Now()
	h.lead()
	h.waitChildren("nightly", 1)
	require.Equal(t, []string{periodic.ChildID("nightly", missed)}, h.children("nightly"))
	require.Never(t, func() bool { return len(h.children("nightly")) > 1 }, 100*time.Millisecond, 5*time.Millisecond)
	at := h.nextMinute()
	h.waitChildren("nightly", 2)
	require.Contains(t, h.children("nightly"), periodic.ChildID("nightly", at))
}

// TestPeriodicAcrossLeaderChange: a leader that lost leadership between
// two launches and a new one that takes over neither skip nor repeat.
func TestPeriodicAcrossLeaderChange(t *testing.T) {
	h := newHarness(t, nil)
	h.lead()
	h.registerAt(periodicJob("hourly", false))
	var want []string
	for i := 1; i <= 2; i++ {
		want = append(want, periodic.ChildID("hourly", h.nextMinute()))
		h.waitChildren("hourly", i)
	}
	h.sys.Root.Send(h.pid, &Leadership{Leader: false})
	h.raft.leader.Store(false)
	require.Eventually(t, func() bool { _, ok := h.sys.ProcessRegistry.GetLocal("server/periodic"); return !ok },
		5*time.Second, time.Millisecond, "the old leader's dispatcher stopped")
	h.lead() // the new leader's dispatcher starts from the stored launch
	next := h.clock.Now().Truncate(time.Minute).Add(time.Minute)
	require.Eventually(t, func() bool { return h.clock.TimerAt(next) }, 5*time.Second, time.Millisecond,
		"the new leader's dispatcher waits for the next minute")
	require.Len(t, h.children("hourly"), 2, "the last launch is stored: nothing is due again")
	want = append(want, periodic.ChildID("hourly", h.nextMinute()))
	h.waitChildren("hourly", 3)
	sort.Strings(want)
	require.Equal(t, want, h.children("hourly"))
}

// TestPeriodicChangesAndStops: a changed cron takes effect at once; a
// stopped or disabled periodic job launches nothing.
func TestPeriodicChangesAndStops(t *testing.T) {
	h := newHarness(t, nil)
	h.lead()
	h.registerAt(periodicJob("p", false, "0 0 1 1 *")) // once a year
	h.nextMinute()
	require.Never(t, func() bool { return len(h.children("p")) > 0 }, 50*time.Millisecond, 5*time.Millisecond)
	h.registerAt(periodicJob("p", false)) // now every minute
	h.nextMinute()
	h.waitChildren("p", 1)

	off := periodicJob("p", false)
	off.Periodic.Enabled = false
	h.registerAt(off)
	for range 3 {
		h.nextMinute()
	}
	require.Never(t, func() bool { return len(h.children("p")) > 1 }, 50*time.Millisecond, 5*time.Millisecond)
	require.Len(t, h.children("p"), 1, fmt.Sprint(h.children("p")))
}

// TestPeriodicLaunchRefusedUnlessLater: the FSM refuses a launch at or
// before the stored one, so a second leader's launch of the same time
// creates nothing.
func TestPeriodicLaunchRefusedUnlessLater(t *testing.T) {
	h := newHarness(t, nil)
	parent := periodicJob("r", false)
	h.registerAt(parent)
	at := h.clock.Now().Add(time.Minute).Truncate(time.Minute)
	h.apply(periodic.LaunchCommand(parent, at, at))
	_, _, err := h.raft.Apply(t.Context(), periodic.LaunchCommand(parent, at, at))
	require.ErrorContains(t, err, "not later than the last one")
	_, _, err = h.raft.Apply(t.Context(), periodic.LaunchCommand(parent, at.Add(300*time.Millisecond), at))
	require.ErrorContains(t, err, "not later than the last one", "a launch in the same second would take the child's name")
	require.Len(t, h.children("r"), 1)

	forced := periodic.ForceTime(h.store.Snapshot(), parent, at.Add(300*time.Millisecond))
	require.Equal(t, at.Add(time.Second), forced, "a force in the launch's second is moved to the next one")
	h.apply(periodic.LaunchCommand(parent, forced, forced))
	require.Equal(t, []string{periodic.ChildID("r", at), periodic.ChildID("r", forced)}, h.children("r"))
	later := at.Add(5 * time.Second)
	require.Equal(t, later, periodic.ForceTime(h.store.Snapshot(), parent, later))

	other := testJob("plain", "batch")
	h.registerAt(other)
	_, _, err = h.raft.Apply(t.Context(), periodic.LaunchCommand(other, at, at))
	require.ErrorContains(t, err, "not an enabled periodic job")
}
