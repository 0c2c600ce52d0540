package main

import (
	"cmp"
	"flag"

	"github.com/troupe-dev/troupe/cluster/state"
	"github.com/troupe-dev/troupe/telemetry"
)

// telemetryFlags are Nomad's telemetry block and the server's
// event_buffer_size as agent flags.
func telemetryFlags(fs *flag.FlagSet, t *telemetry.Config, eventBuffer *int) {
	fs.IntVar(eventBuffer, "event-buffer-size", state.DefaultEventBufferSize, "applied commands whose events /v1/event/stream can replay (Nomad's event_buffer_size)")
	fs.BoolVar(&t.Prometheus, "telemetry-prometheus", t.Prometheus, "serve /v1/metrics?format=prometheus (Nomad's telemetry prometheus_metrics)")
	fs.DurationVar(&t.Interval, "telemetry-collection-interval", cmp.Or(t.Interval, telemetry.DefaultInterval), "how often gauges are collected, and the metrics summary's interval (Nomad's collection_interval)")
	fs.BoolVar(&t.DisableHostname, "telemetry-disable-hostname", t.DisableHostname, "leave the host name out of gauge names (Nomad's disable_hostname)")
}
