package e2e

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/troupe-dev/troupe/messages"
	"github.com/troupe-dev/troupe/runtime/csi/hostpath"
)

// Bounds of the leader-kill scenario.
const (
	unpublishLatency = 400 * time.Millisecond // each ControllerUnpublishVolume, on every instance
	drainTimeout     = 60 * time.Second       // the new leader frees every claim
	triggerPoll      = 20 * time.Millisecond  // watching for the first unpublish
	queuedAtKill     = 3                      // claims node-detached (queued or in flight) at the kill
)

// TestClusterCSILeaderKillControllerQueue kills the leader while its
// controller queue holds several ControllerUnpublishVolume operations
// (DESIGN.md hard problem 2: the queue is rebuilt from raft on the new
// leader, so serialisation survives a failover). 3 servers, 2 clients
// running the hostpath plugin; 5 volumes q[0..4] claimed by a job of 5.
// Every unpublish takes 400 ms. Once the job is stopped and the first
// unpublish has answered while at least 3 claims wait for their
// controller detach, the leader is SIGKILLed. Checks:
//
//   - the new leader frees every claim, each volume through a successful
//     ControllerUnpublishVolume, at most 2 per volume (the one in flight
//     at the kill may run again), most of them run by the new leader;
//   - the controller calls (create, publish, unpublish) never overlap,
//     across both instances and both leaders, except at most one pair
//     made of the call in flight at the kill (the dead leader's RPC is
//     cancelled only on its side) and a call started after it;
//   - every controller call runs on the instance on the lowest node ID.
func TestClusterCSILeaderKillControllerQueue(t *testing.T) {
	cc := startCSICluster(t, 3, 2)
	begin := time.Now()
	cc.runPlugin(t)
	vols := []string{"q[0]", "q[1]", "q[2]", "q[3]", "q[4]"}
	ext := cc.create(t, vols...)
	cc.register(t, volumeJobHCL("q", len(vols), "q", true))
	cc.waitRunning(t, "q", len(vols), settleTimeout, nil)
	taken := cc.waitTakenAndWritten(t, ext, vols)
	t.Logf("plugin up, 5 volumes taken and written: %.1f s (%s)", time.Since(begin).Seconds(), describeClaims(taken))

	for _, id := range cc.order {
		ctx, cancel := context.WithTimeout(t.Context(), requestTimeout)
		err := cc.control(id).SetLatency(ctx, "ControllerUnpublishVolume", unpublishLatency)
		cancel()
		require.NoError(t, err, "latency on the instance on %s", short(id))
	}
	old := cc.leader(t)
	_, _, err := cc.server().API.Jobs().Deregister("q", false, nil)
	require.NoError(t, err)
	stoppedAt := time.Now()

	atKill := cc.waitQueued(t, ext, vols)
	killedAt := time.Now()
	old.Kill(t)
	t.Logf("stop -> kill of leader %s: %.1f s; %d unpublish answered, claims %s", old.Name,
		killedAt.Sub(stoppedAt).Seconds(), len(atKill.done), describeClaims(atKill.claims))
	next := cc.waitNewLeader(t, old)
	t.Logf("kill -> new leader %s: %.1f s", next, time.Since(killedAt).Seconds())

	cc.waitFreed(t, drainTimeout, "every claim freed by the new leader", vols, nil)
	t.Logf("kill -> all claims freed: %.1f s", time.Since(killedAt).Seconds())

	var all []hostpath.Call
	for _, id := range cc.order {
		all = append(all, cc.calls(t, id, controllerCalls...)...)
	}
	slices.SortFunc(all, func(a, b hostpath.Call) int { return a.Start.Compare(b.Start) })
	t.Logf("controller calls: %s", describeTimedCalls(all, killedAt))

	// Routing: the lowest node's instance ran everything, before and after.
	for _, id := range cc.order[1:] {
		require.Empty(t, cc.calls(t, id, controllerCalls...), "controller calls on %s, not the lowest node %s",
			short(id), short(cc.order[0]))
	}

	// Each volume detached, at most twice; most by the new leader.
	byNew := 0
	for _, v := range vols {
		unpubs := filterCalls(all, "ControllerUnpublishVolume", ext[v])
		require.True(t, slices.ContainsFunc(unpubs, func(c hostpath.Call) bool { return c.Code == "OK" }),
			"no successful ControllerUnpublishVolume of %s: %s", v, describeTimedCalls(unpubs, killedAt))
		require.LessOrEqual(t, len(unpubs), 2, "ControllerUnpublishVolume of %s: %s", v, describeTimedCalls(unpubs, killedAt))
		if slices.ContainsFunc(unpubs, func(c hostpath.Call) bool { return c.Code == "OK" && c.Start.After(killedAt) }) {
			byNew++
		}
	}
	require.GreaterOrEqual(t, byNew, queuedAtKill-1,
		"volumes detached by the new leader (%d node-detached at the kill): %s", len(atKill.detached), describeTimedCalls(all, killedAt))
	t.Logf("volumes detached by the new leader: %d of %d", byNew, len(vols))

	// Serialisation across the failover.
	pairs, most := overlaps(all)
	require.LessOrEqual(t, len(pairs), 1, "controller calls overlap: %s", describePairs(pairs, killedAt))
	if len(pairs) == 0 {
		require.Equal(t, 1, most, "controller calls at once")
		t.Logf("no overlap: at most 1 controller call at a time, across the failover")
		return
	}
	p := pairs[0]
	inFlight := func(c hostpath.Call) bool { return c.Start.Before(killedAt) && c.End.After(killedAt) }
	ok := (inFlight(p[0]) && p[1].Start.After(killedAt)) || (inFlight(p[1]) && p[0].Start.After(killedAt))
	require.True(t, ok, "the one overlap is not the call in flight at the kill with a later one: %s",
		describePairs(pairs, killedAt))
	require.Equal(t, 2, most, "controller calls at once")
	t.Logf("one overlap, the known limit (old leader's in-flight call vs the new leader's): %s",
		describePairs(pairs, killedAt))
}

// queueState is what waitQueued saw last.
type queueState struct {
	done     []hostpath.Call // ControllerUnpublishVolume calls answered
	claims   map[string][]*messages.CSIVolumeClaim
	detached []string // volumes whose claim is node-detached: queued or in flight
}

// waitQueued polls fast until a ControllerUnpublishVolume has answered
// (the plugin records a call when it ends, so the next one has just been
// dispatched) while at least queuedAtKill claims wait for their
// controller detach, and fails if every unpublish ran first.
func (cc *csiCluster) waitQueued(t *testing.T, ext map[string]string, vols []string) queueState {
	t.Helper()
	deadline := time.Now().Add(settleTimeout)
	tick := time.NewTicker(triggerPoll)
	defer tick.Stop()
	var last queueState
	for {
		if err := cc.checkAlive(); err != nil {
			t.Fatalf("waiting for queued unpublishes: %v", err)
		}
		if s, err := cc.queueState(t, ext, vols); err == nil {
			last = s
			if len(s.done) >= len(vols) {
				t.Fatalf("every unpublish answered before %d were queued at once: %s", queuedAtKill, describeClaims(s.claims))
			}
			if len(s.done) > 0 && len(s.detached) >= queuedAtKill {
				return s
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("no unpublish answered with %d claims queued after %s; last: %d answered, %s",
				queuedAtKill, settleTimeout, len(last.done), describeClaims(last.claims))
		}
		<-tick.C
	}
}

func (cc *csiCluster) queueState(t *testing.T, ext map[string]string, vols []string) (queueState, error) {
	t.Helper()
	var s queueState
	for _, id := range cc.order {
		ctx, cancel := context.WithTimeout(t.Context(), requestTimeout)
		calls, err := cc.control(id).Calls(ctx)
		cancel()
		if err != nil {
			return s, err
		}
		for _, c := range calls {
			if c.Method == "ControllerUnpublishVolume" {
				s.done = append(s.done, c)
			}
		}
	}
	if len(s.done) == 0 {
		return s, nil
	}
	claims, err := cc.claims(vols...)
	if err != nil {
		return s, err
	}
	s.claims = claims
	for _, v := range vols {
		if slices.ContainsFunc(claims[v], func(c *messages.CSIVolumeClaim) bool { return c.GetState() == "node-detached" }) {
			s.detached = append(s.detached, v)
		}
	}
	return s, nil
}

// waitNewLeader waits until every live server names the same leader, not
// old, and returns its address.
func (cc *csiCluster) waitNewLeader(t *testing.T, old *agentProc) string {
	t.Helper()
	var next string
	cc.eventually(t, formTimeout, "a new leader after "+old.Name+" died", func() (bool, string) {
		seen := map[string]bool{}
		for _, s := range cc.liveServers() {
			l, err := s.API.Status().Leader()
			if err != nil || l == "" || l == old.RaftAddr() {
				return false, fmt.Sprintf("%s names leader %q (%v)", s.Name, l, err)
			}
			seen[l], next = true, l
		}
		return len(seen) == 1, fmt.Sprintf("survivors name different leaders: %v", seen)
	})
	return next
}

// overlaps returns the pairs of calls that ran at the same time and the
// most calls running at once.
func overlaps(calls []hostpath.Call) (pairs [][2]hostpath.Call, most int) {
	for i, a := range calls {
		for _, b := range calls[i+1:] {
			if a.Start.Before(b.End) && b.Start.Before(a.End) {
				pairs = append(pairs, [2]hostpath.Call{a, b})
			}
		}
	}
	type event struct {
		at    time.Time
		delta int
	}
	events := make([]event, 0, 2*len(calls))
	for _, c := range calls {
		events = append(events, event{c.Start, 1}, event{c.End, -1})
	}
	slices.SortFunc(events, func(a, b event) int {
		if c := a.at.Compare(b.at); c != 0 {
			return c
		}
		return a.delta - b.delta // an end before a start at the same instant
	})
	n := 0
	for _, e := range events {
		n += e.delta
		most = max(most, n)
	}
	return pairs, most
}

// describeTimedCalls shows each call with its start and end relative to
// the kill (negative: before it).
func describeTimedCalls(calls []hostpath.Call, killedAt time.Time) string {
	parts := make([]string, 0, len(calls))
	for _, c := range calls {
		parts = append(parts, fmt.Sprintf("%s(%s)[%+.3f,%+.3f]=%s", c.Method, c.VolumeID,
			c.Start.Sub(killedAt).Seconds(), c.End.Sub(killedAt).Seconds(), c.Code))
	}
	return "[" + strings.Join(parts, " ") + "]"
}

func describePairs(pairs [][2]hostpath.Call, killedAt time.Time) string {
	parts := make([]string, 0, len(pairs))
	for _, p := range pairs {
		parts = append(parts, describeTimedCalls(p[:], killedAt))
	}
	return strings.Join(parts, "; ")
}

// TestControllerCallOverlaps checks the overlap count that the leader-kill
// scenario relies on (no cluster needed).
func TestControllerCallOverlaps(t *testing.T) {
	t0 := time.Unix(1000, 0)
	call := func(from, to int) hostpath.Call {
		return hostpath.Call{Start: t0.Add(time.Duration(from) * time.Millisecond), End: t0.Add(time.Duration(to) * time.Millisecond)}
	}
	for _, tt := range []struct {
		name      string
		calls     []hostpath.Call
		pairs     int
		most      int
		firstPair [2]int // indexes into calls of pairs[0]
	}{
		{name: "none", most: 0},
		{name: "one after another", calls: []hostpath.Call{call(0, 10), call(11, 20), call(25, 30)}, most: 1},
		{name: "end meets start", calls: []hostpath.Call{call(0, 10), call(10, 20)}, most: 1},
		{name: "one pair", calls: []hostpath.Call{call(0, 10), call(5, 20), call(21, 30)}, pairs: 1, most: 2, firstPair: [2]int{0, 1}},
		{name: "nested", calls: []hostpath.Call{call(0, 30), call(5, 10), call(12, 20)}, pairs: 2, most: 2, firstPair: [2]int{0, 1}},
		{name: "three at once", calls: []hostpath.Call{call(0, 30), call(5, 25), call(10, 20)}, pairs: 3, most: 3, firstPair: [2]int{0, 1}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			pairs, most := overlaps(tt.calls)
			require.Len(t, pairs, tt.pairs)
			require.Equal(t, tt.most, most)
			if tt.pairs > 0 {
				require.Equal(t, [2]hostpath.Call{tt.calls[tt.firstPair[0]], tt.calls[tt.firstPair[1]]}, pairs[0])
			}
		})
	}
}
