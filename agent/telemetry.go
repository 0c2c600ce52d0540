package agent

import (
	"context"
	"time"

	metrics "github.com/hashicorp/go-metrics"

	"github.com/troupe-dev/troupe/messages"
	"github.com/troupe-dev/troupe/telemetry"
)

// startTelemetry starts the agent's metrics (GET /v1/metrics): the
// runtime's, raft's and the actors' (with Nomad's client allocation
// gauges when the agent runs a client).
func (a *Agent) startTelemetry() error {
	t, err := telemetry.Start(a.cfg.Telemetry)
	if err != nil {
		return err
	}
	t.AddCollector(telemetry.ActorCollector(a.sys.Registry, a.node.GetID()))
	if a.cfg.Server {
		t.AddCollector(a.collectScheduler)
	}
	a.tele = t
	return nil
}

// stopTelemetry ends the metrics' collection.
func (a *Agent) stopTelemetry() {
	if a.tele != nil {
		a.tele.Stop()
	}
}

// Nomad's broker and plan queue gauges, from the leader's scheduler
// actor (0 on a server that does not lead), and its blocked evaluations
// (nomad.nomad.blocked_evals.total_blocked, leader only as Nomad's).
var (
	keyBrokerReady   = []string{"nomad", "broker", "total_ready"}
	keyBrokerPending = []string{"nomad", "broker", "total_pending"}
	keyBrokerUnacked = []string{"nomad", "broker", "total_unacked"}
	keyBrokerWaiting = []string{"nomad", "broker", "total_waiting"}
	keyPlanQueue     = []string{"nomad", "plan", "queue_depth"}
	keyBlocked       = []string{"nomad", "blocked_evals", "total_blocked"}
)

// collectScheduler sets the scheduler's gauges; it runs on the
// telemetry's goroutine. Counting the blocked evaluations reads them
// from a snapshot once per collection, off every hot path.
func (a *Agent) collectScheduler(m *metrics.Metrics) {
	b := a.schedStats.Load()
	m.SetGauge(keyBrokerReady, float32(b.Ready))
	m.SetGauge(keyBrokerPending, float32(b.Pending))
	m.SetGauge(keyBrokerUnacked, float32(b.Unacked))
	m.SetGauge(keyBrokerWaiting, float32(b.Waiting))
	m.SetGauge(keyPlanQueue, float32(b.Unacked))
	blocked := 0
	if a.leads() {
		blocked = len(a.store.Snapshot().EvalsByStatus(messages.EvalStatusBlocked))
	}
	m.SetGauge(keyBlocked, float32(blocked))
}

// keyPlanSubmit is Nomad's nomad.nomad.plan.submit: how long committing a
// scheduler's plan took, from its proposal to its answer.
var keyPlanSubmit = []string{"nomad", "plan", "submit"}

// measuredProposer is the agent as the server's actors propose through
// it, timing plans.
type measuredProposer struct{ a *Agent }

func (p measuredProposer) Apply(ctx context.Context, cmd *messages.Command) (any, uint64, error) {
	if _, ok := cmd.GetCmd().(*messages.Command_ApplyPlan); ok {
		defer metrics.MeasureSince(keyPlanSubmit, time.Now())
	}
	return p.a.Apply(ctx, cmd)
}
