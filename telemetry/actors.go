package telemetry

import (
	"strings"

	metrics "github.com/hashicorp/go-metrics"

	"github.com/troupe-dev/troupe/actors"
)

// Actor metrics (troupe's own), labelled kind: nomad.troupe.actors.live,
// .mailbox_length (gauges), .messages and .restarts (counters),
// .message_wait (sample: mean milliseconds a message waited in its
// mailbox over the interval) and .message_wait_max (gauge, ms).
var (
	keyActorsLive     = []string{"troupe", "actors", "live"}
	keyActorsMailbox  = []string{"troupe", "actors", "mailbox_length"}
	keyActorsMessages = []string{"troupe", "actors", "messages"}
	keyActorsRestarts = []string{"troupe", "actors", "restarts"}
	keyActorsWait     = []string{"troupe", "actors", "message_wait"}
	keyActorsWaitMax  = []string{"troupe", "actors", "message_wait_max"}
)

// Nomad's client allocation gauges, from the alloc actors' phases.
var (
	keyAllocsRunning  = []string{"client", "allocs", "running"}
	keyAllocsPending  = []string{"client", "allocs", "pending"}
	keyAllocsTerminal = []string{"client", "allocs", "terminal"}
)

// ActorCollector emits the registry's actor metrics and, when the agent
// runs a client (nodeID != ""), Nomad's nomad.client.allocs.* gauges
// counted from its allocation actors' phases. Labels are made once per
// kind; counters are the change since the last collection.
func ActorCollector(r *actors.Registry, nodeID string) func(*metrics.Metrics) {
	labels := map[string][]metrics.Label{}
	last := map[string]actors.KindStats{}
	nodeLabels := []metrics.Label{{Name: "node_id", Value: nodeID}}
	return func(m *metrics.Metrics) {
		for _, k := range r.Kinds() {
			l, ok := labels[k.Kind]
			if !ok {
				l = []metrics.Label{{Name: "kind", Value: k.Kind}}
				labels[k.Kind] = l
			}
			prev := last[k.Kind]
			last[k.Kind] = k
			m.SetGaugeWithLabels(keyActorsLive, float32(k.Live), l)
			m.SetGaugeWithLabels(keyActorsMailbox, float32(k.MailboxLen), l)
			m.IncrCounterWithLabels(keyActorsMessages, float32(k.Messages-prev.Messages), l)
			m.IncrCounterWithLabels(keyActorsRestarts, float32(k.Restarts-prev.Restarts), l)
			if n := k.WaitCount - prev.WaitCount; n > 0 {
				mean := (k.WaitTotal - prev.WaitTotal).Seconds() * 1000 / float64(n)
				m.AddSampleWithLabels(keyActorsWait, float32(mean), l)
			}
			m.SetGaugeWithLabels(keyActorsWaitMax, float32(k.WaitMax.Seconds()*1000), l)
			if k.Kind == "alloc" && nodeID != "" {
				allocGauges(m, k.Phases, nodeLabels)
			}
		}
		if _, ok := last["alloc"]; !ok && nodeID != "" {
			allocGauges(m, nil, nodeLabels)
		}
	}
}

// allocGauges sets the client's allocation gauges from the alloc actors'
// phases ("running", "loading", "prerun ...", "terminal", ...).
func allocGauges(m *metrics.Metrics, phases map[string]int, l []metrics.Label) {
	var running, pending, terminal int
	for ph, n := range phases {
		switch {
		case strings.HasPrefix(ph, "running"):
			running += n
		case ph == "terminal":
			terminal += n
		case ph == "loading", strings.HasPrefix(ph, "prerun"), strings.HasPrefix(ph, "waiting to retry prerun"):
			pending += n
		}
	}
	m.SetGaugeWithLabels(keyAllocsRunning, float32(running), l)
	m.SetGaugeWithLabels(keyAllocsPending, float32(pending), l)
	m.SetGaugeWithLabels(keyAllocsTerminal, float32(terminal), l)
}
