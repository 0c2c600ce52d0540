package httpapi

import (
	"net/http"
)

// MetricsSource is the agent's telemetry (telemetry.Telemetry).
type MetricsSource interface {
	// Collect runs the collectors now, so that gauges are current.
	Collect()
	// Summary is Nomad's JSON summary of the latest interval.
	Summary(w http.ResponseWriter, r *http.Request) (any, error)
	// Prometheus is the text format handler, or an error when the
	// agent does not keep Prometheus metrics.
	Prometheus() (http.Handler, error)
}

func (s *Server) metricsRoutes(m *http.ServeMux) {
	m.HandleFunc("GET /v1/metrics", s.metrics)
}

// metrics serves GET /v1/metrics: Nomad's JSON summary, or with
// ?format=prometheus the Prometheus text format.
func (s *Server) metrics(w http.ResponseWriter, r *http.Request) {
	src := s.opts.Metrics
	if src == nil {
		s.writeError(w, r, codeErr(http.StatusNotFound, "this agent keeps no metrics"))
		return
	}
	src.Collect()
	switch format := r.URL.Query().Get("format"); format {
	case "":
		s.wrap(src.Summary)(w, r)
	case "prometheus":
		h, err := src.Prometheus()
		if err != nil {
			s.writeError(w, r, codeErr(http.StatusUnsupportedMediaType, "%v", err))
			return
		}
		h.ServeHTTP(w, r)
	default:
		s.writeError(w, r, codeErr(http.StatusBadRequest, "unknown metrics format %q: want prometheus or none", format))
	}
}
