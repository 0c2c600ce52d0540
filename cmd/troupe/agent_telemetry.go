package main

import (
	"flag"

	"github.com/troupe-dev/troupe/telemetry"
)

// telemetryFlags are Nomad's telemetry block as agent flags.
func telemetryFlags(fs *flag.FlagSet, t *telemetry.Config) {
	fs.BoolVar(&t.Prometheus, "telemetry-prometheus", false, "serve /v1/metrics?format=prometheus (Nomad's telemetry prometheus_metrics)")
	fs.DurationVar(&t.Interval, "telemetry-collection-interval", telemetry.DefaultInterval, "how often gauges are collected, and the metrics summary's interval (Nomad's collection_interval)")
	fs.BoolVar(&t.DisableHostname, "telemetry-disable-hostname", false, "leave the host name out of gauge names (Nomad's disable_hostname)")
}
