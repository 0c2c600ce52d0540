package node

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/troupe-dev/troupe/actors"
	"github.com/troupe-dev/troupe/messages"
)

// fakeView is a StateView over one node and its allocations.
type fakeView struct {
	node   *messages.Node
	allocs []*messages.Allocation
	job    *messages.Job
	window time.Duration
	live   int // LiveNodes; 0 reads as 1
}

func (v *fakeView) NodeByID(string) *messages.Node                   { return v.node }
func (v *fakeView) LiveNodes() int                                   { return max(v.live, 1) }
func (v *fakeView) AllocsByNode(string) []*messages.Allocation       { return v.allocs }
func (v *fakeView) JobVersion(string, string, uint64) *messages.Job  { return v.job }
func (v *fakeView) JobByID(string, string) *messages.Job             { return v.job }
func (v *fakeView) EvalsByJob(string, string) []*messages.Evaluation { return nil }
func (v *fakeView) Index(...string) uint64                           { return 1 }
func (v *fakeView) DisconnectWindow(string) time.Duration            { return v.window }

// flakyProposer fails its first failures calls, then records commands.
type flakyProposer struct {
	mu       sync.Mutex
	failures int
	calls    []*messages.Command
}

func (p *flakyProposer) Apply(_ context.Context, cmd *messages.Command) (any, uint64, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.calls = append(p.calls, cmd)
	if p.failures > 0 {
		p.failures--
		return nil, 0, errors.New("not the leader")
	}
	return nil, 1, nil
}

func (p *flakyProposer) statuses() []string {
	p.mu.Lock()
	defer p.mu.Unlock()
	var out []string
	for _, c := range p.calls {
		if u := c.GetUpdateNodeStatus(); u != nil {
			out = append(out, u.GetStatus())
		}
	}
	return out
}

// TestMissedHeartbeatCommitsDownAndRetries: a node that never heartbeats
// goes down after its TTL and grace; the commit that failed is retried, and
// it carries an evaluation for the job with allocations there.
func TestMissedHeartbeatCommitsDownAndRetries(t *testing.T) {
	clock := actors.NewFakeClock(time.Unix(1000, 0))
	view := &fakeView{node: &messages.Node{ID: "n1", Status: "ready"},
		job:    &messages.Job{ID: "web", Namespace: "default", Type: "service"},
		allocs: []*messages.Allocation{{ID: "a1", JobID: "web", Namespace: "default", DesiredStatus: "run", ClientStatus: "running"}}}
	prop := &flakyProposer{failures: 1}
	defer startNodeServer(t, clock, view, prop)()

	require.Eventually(t, func() bool { return clock.Pending() == 1 }, 5*time.Second, time.Millisecond)
	clock.Advance(time.Second) // within failover TTL + grace: nothing yet
	require.Empty(t, prop.statuses())
	require.Eventually(t, func() bool { return clock.Pending() == 1 }, 5*time.Second, time.Millisecond)
	clock.Advance(2 * time.Second)
	require.Eventually(t, func() bool { return len(prop.statuses()) == 1 }, 5*time.Second, time.Millisecond)
	require.Eventually(t, func() bool { return clock.Pending() >= 1 }, 5*time.Second, time.Millisecond)
	clock.Advance(time.Second) // the retry
	require.Eventually(t, func() bool { return len(prop.statuses()) == 2 }, 5*time.Second, time.Millisecond)
	require.Equal(t, []string{"down", "down"}, prop.statuses())
	prop.mu.Lock()
	last := prop.calls[len(prop.calls)-1].GetUpdateNodeStatus()
	prop.mu.Unlock()
	require.Len(t, last.GetEvals(), 1)
	require.Equal(t, "web", last.GetEvals()[0].GetJobID())
	require.Equal(t, "node-update", last.GetEvals()[0].GetTriggeredBy())
}

// TestMissedHeartbeatWithWindowDisconnects: the node's disconnect window,
// read from the state view (not from its allocations), makes a node that
// misses its heartbeats disconnected instead of down.
func TestMissedHeartbeatWithWindowDisconnects(t *testing.T) {
	clock := actors.NewFakeClock(time.Unix(1000, 0))
	view := &fakeView{node: &messages.Node{ID: "n1", Status: "ready"}, window: time.Minute,
		job:    &messages.Job{ID: "web", Namespace: "default", Type: "service"},
		allocs: []*messages.Allocation{{ID: "a1", JobID: "web", Namespace: "default", DesiredStatus: "run", ClientStatus: "running"}}}
	prop := &flakyProposer{}
	defer startNodeServer(t, clock, view, prop)()

	require.Eventually(t, func() bool { return clock.Pending() == 1 }, 5*time.Second, time.Millisecond)
	clock.Advance(3 * time.Second)
	require.Eventually(t, func() bool { return len(prop.statuses()) == 1 }, 5*time.Second, time.Millisecond)
	require.Equal(t, []string{"disconnected"}, prop.statuses())
}

// startNodeServer spawns the server-side node actor of node n1 over view
// and prop, heartbeats at a 1 s TTL, 1 s grace and 1 s failover TTL, and
// returns what stops it.
func startNodeServer(t *testing.T, clock *actors.FakeClock, view StateView, prop Proposer) func() {
	t.Helper()
	_, stop := startNodeServerWith(t, clock, view, prop, nil)
	return stop
}
