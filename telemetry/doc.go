// Package telemetry is the agent's metrics, in Nomad's names and shapes:
// hashicorp/go-metrics (Nomad's own library) with an in-memory sink, whose
// summary is GET /v1/metrics, and, with Config.Prometheus, a Prometheus
// sink served as the text format (?format=prometheus).
//
//	t, err := telemetry.Start(telemetry.Config{Interval: 10 * time.Second, Prometheus: true})
//	t.AddCollector(func(m *metrics.Metrics) { m.SetGauge(...) }) // run every Interval
//	defer t.Stop()
//
// The library's global metrics are set to this instance, so what raft
// emits (nomad.raft.apply, ...) is there too. Metrics named for what
// Nomad also has keep Nomad's names (service name "nomad"); troupe's own
// for its actors are nomad.troupe.actors.* (see Actors).
//
// Collectors run on the telemetry's own goroutine, never on a hot path:
// code that counts per message keeps atomics and a collector reads them.
package telemetry
