package telemetry

import "errors"

// ErrPrometheusDisabled says the Prometheus format was asked of an agent
// that does not keep it (Config.Prometheus, -telemetry-prometheus).
var ErrPrometheusDisabled = errors.New("telemetry: Prometheus metrics are not enabled (-telemetry-prometheus)")
