package agent

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	nomad "github.com/hashicorp/nomad/api"
	"github.com/stretchr/testify/require"

	"github.com/troupe-dev/troupe/telemetry"
)

// telemetryAgent is rawExecAgent with Prometheus metrics collected every
// 100ms, gauge names without the host name.
func telemetryAgent(t *testing.T) (*Agent, *nomad.Client) {
	t.Helper()
	cfg := testConfig(t, t.TempDir())
	cfg.RawExecEnabled = true
	cfg.Telemetry = telemetry.Config{Prometheus: true, DisableHostname: true, Interval: 100 * time.Millisecond}
	a := startAgent(t, cfg)
	t.Cleanup(func() { _ = a.Shutdown() })
	c, err := nomad.NewClient(&nomad.Config{Address: "http://" + a.HTTPAddr()})
	require.NoError(t, err)
	return a, c
}

func gauge(t *testing.T, c *nomad.Client, name string) (float32, bool) {
	t.Helper()
	m, _, err := c.Operator().MetricsSummary(nil)
	require.NoError(t, err)
	for _, g := range m.Gauges {
		if g.Name == name {
			return g.Value, true
		}
	}
	return 0, false
}

// TestMetricsJobRunRaisesAllocsRunning: /v1/metrics (read by Nomad's
// client) has the runtime's and the actors' gauges, raft's counters, and
// nomad.client.allocs.running goes from 0 to 1 when a job runs; the
// Prometheus format has the same under Prometheus names.
func TestMetricsJobRunRaisesAllocsRunning(t *testing.T) {
	a, c := telemetryAgent(t)
	running, ok := gauge(t, c, "nomad.client.allocs.running")
	require.True(t, ok, "nomad.client.allocs.running present before any job")
	require.Zero(t, running)
	_, ok = gauge(t, c, "nomad.runtime.num_goroutines")
	require.True(t, ok)

	_, _, err := c.Jobs().Register(rawExecJob("metrics", "sleep 100"), nil)
	require.NoError(t, err)
	require.Eventually(t, func() bool {
		v, _ := gauge(t, c, "nomad.client.allocs.running")
		return v == 1
	}, 30*time.Second, 50*time.Millisecond)

	m, _, err := c.Operator().MetricsSummary(nil)
	require.NoError(t, err)
	var names []string
	for _, g := range m.Gauges {
		names = append(names, g.Name)
	}
	require.Contains(t, names, "nomad.troupe.actors.live")

	resp, err := http.Get("http://" + a.HTTPAddr() + "/v1/metrics?format=prometheus")
	require.NoError(t, err)
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	require.Equal(t, http.StatusOK, resp.StatusCode)
	for _, want := range []string{"nomad_client_allocs_running", "nomad_nomad_plan_submit", "nomad_runtime_num_goroutines", "nomad_raft_apply", `nomad_troupe_actors_messages{kind="alloc"}`} {
		require.Contains(t, string(body), want)
	}
}

// TestPrometheusScrapesAgent runs Debian's prometheus server scraping an
// agent every second and finds a troupe metric through its query API.
func TestPrometheusScrapesAgent(t *testing.T) {
	bin, err := exec.LookPath("prometheus")
	if err != nil {
		t.Skip("prometheus is not installed (scripts/setup.sh installs it)")
	}
	a, c := telemetryAgent(t)
	_, _, err = c.Jobs().Register(rawExecJob("scraped", "sleep 100"), nil)
	require.NoError(t, err)
	dir := t.TempDir()
	conf := fmt.Sprintf(`global:
  scrape_interval: 1s
scrape_configs:
  - job_name: troupe
    metrics_path: /v1/metrics
    params:
      format: [prometheus]
    static_configs:
      - targets: [%q]
`, a.HTTPAddr())
	require.NoError(t, os.WriteFile(filepath.Join(dir, "prometheus.yml"), []byte(conf), 0o644))
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	addr := ln.Addr().String()
	require.NoError(t, ln.Close())
	ctx, cancel := context.WithCancel(context.Background())
	cmd := exec.CommandContext(ctx, bin, "--config.file="+filepath.Join(dir, "prometheus.yml"),
		"--storage.tsdb.path="+filepath.Join(dir, "data"), "--web.listen-address="+addr)
	out, err := os.Create(filepath.Join(dir, "prometheus.log"))
	require.NoError(t, err)
	cmd.Stdout, cmd.Stderr = out, out
	require.NoError(t, cmd.Start())
	t.Cleanup(func() { cancel(); _ = cmd.Wait(); _ = out.Close() })

	// A troupe metric, the scheduler's broker gauge and the plan's
	// evaluation time, each with its value.
	for _, q := range []struct{ query, want string }{
		{`nomad_troupe_actors_live{kind="agent"}`, "1"},
		{`nomad_nomad_broker_total_ready`, "0"},
		{`nomad_nomad_plan_evaluate_count > bool 0`, "1"},
	} {
		promHas(t, addr, dir, q.query, q.want)
	}
}

// promHas waits until prometheus at addr answers query with one series
// whose value is want.
func promHas(t *testing.T, addr, dir, q, want string) {
	t.Helper()
	query := "http://" + addr + "/api/v1/query?query=" + url.QueryEscape(q)
	var last string
	ok := assertEventually(func() bool {
		resp, err := http.Get(query)
		if err != nil {
			last = err.Error()
			return false
		}
		defer resp.Body.Close()
		var r struct {
			Status string
			Data   struct{ Result []struct{ Value []any } }
		}
		raw, _ := io.ReadAll(resp.Body)
		last = string(raw)
		return json.Unmarshal(raw, &r) == nil && r.Status == "success" && len(r.Data.Result) == 1 && r.Data.Result[0].Value[1] == want
	}, 60*time.Second)
	if !ok {
		log, _ := os.ReadFile(filepath.Join(dir, "prometheus.log"))
		t.Fatalf("prometheus never had %s = %s; last answer %s\nprometheus log:\n%s", q, want, last, log)
	}
}

// assertEventually polls cond every 100ms until it holds or d passes.
func assertEventually(cond func() bool, d time.Duration) bool {
	deadline := time.Now().Add(d)
	for {
		if cond() {
			return true
		}
		if time.Now().After(deadline) {
			return false
		}
		time.Sleep(100 * time.Millisecond)
	}
}
