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
	a.tele = t
	return nil
}

// stopTelemetry ends the metrics' collection.
func (a *Agent) stopTelemetry() {
	if a.tele != nil {
		a.tele.Stop()
	}
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
