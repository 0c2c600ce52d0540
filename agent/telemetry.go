package agent

import (
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
