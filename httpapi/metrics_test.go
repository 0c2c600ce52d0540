package httpapi

import (
	"net/http"
	"net/http/httptest"
	"testing"

	nomad "github.com/hashicorp/nomad/api"
	"github.com/stretchr/testify/require"

	"github.com/troupe-dev/troupe/telemetry"
)

// TestMetricsFormats: the JSON summary reads with Nomad's client; the
// Prometheus format is refused (415, naming the flag) when the agent does
// not keep it; an unknown format is a 400.
func TestMetricsFormats(t *testing.T) {
	tel, err := telemetry.Start(telemetry.Config{DisableHostname: true})
	require.NoError(t, err)
	defer tel.Stop()
	srv := httptest.NewServer(New(newFSMBackend(), nil, Options{Metrics: tel}))
	defer srv.Close()
	c, err := nomad.NewClient(&nomad.Config{Address: srv.URL})
	require.NoError(t, err)
	sum, _, err := c.Operator().MetricsSummary(nil)
	require.NoError(t, err)
	var names []string
	for _, g := range sum.Gauges {
		names = append(names, g.Name)
	}
	require.Contains(t, names, "nomad.runtime.num_goroutines")

	for q, code := range map[string]int{"?format=prometheus": http.StatusUnsupportedMediaType, "?format=xml": http.StatusBadRequest} {
		resp, err := http.Get(srv.URL + "/v1/metrics" + q)
		require.NoError(t, err)
		resp.Body.Close()
		require.Equal(t, code, resp.StatusCode, q)
	}
}
