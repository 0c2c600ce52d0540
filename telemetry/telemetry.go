package telemetry

import (
	"fmt"
	"net/http"
	"sync"
	"time"

	metrics "github.com/hashicorp/go-metrics"
	metricsprom "github.com/hashicorp/go-metrics/prometheus"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"
)

// DefaultInterval is Nomad's default collection_interval.
const DefaultInterval = time.Second

// Config is the agent's telemetry block (Nomad's names).
type Config struct {
	// Interval is collection_interval: how often collectors run and the
	// in-memory sink's interval (0: DefaultInterval).
	Interval time.Duration
	// Prometheus is prometheus_metrics: keep the Prometheus format.
	Prometheus bool
	// DisableHostname is disable_hostname: no host name in gauge names.
	DisableHostname bool
}

// Telemetry is one agent's metrics.
type Telemetry struct {
	m      *metrics.Metrics
	inmem  *metrics.InmemSink
	reg    *prometheus.Registry // nil: Prometheus off
	cfg    Config
	stop   chan struct{}
	wg     sync.WaitGroup
	mu     sync.Mutex // guards collec; held while collectors run
	collec []func(*metrics.Metrics)
}

// Start sets up the sinks, makes them go-metrics' global ones and starts
// collecting every Interval.
func Start(cfg Config) (*Telemetry, error) {
	if cfg.Interval <= 0 {
		cfg.Interval = DefaultInterval
	}
	t := &Telemetry{cfg: cfg, stop: make(chan struct{}),
		inmem: metrics.NewInmemSink(cfg.Interval, max(time.Minute, 6*cfg.Interval))}
	sinks := metrics.FanoutSink{t.inmem}
	if cfg.Prometheus {
		t.reg = prometheus.NewRegistry()
		ps, err := metricsprom.NewPrometheusSinkFrom(metricsprom.PrometheusOpts{Registerer: t.reg, Expiration: time.Minute})
		if err != nil {
			return nil, fmt.Errorf("telemetry: prometheus sink: %w", err)
		}
		sinks = append(sinks, ps)
	}
	conf := metrics.DefaultConfig("nomad")
	conf.EnableHostname = !cfg.DisableHostname
	conf.EnableRuntimeMetrics = false // emitted by our collector loop, which stops
	conf.ProfileInterval = cfg.Interval
	m, err := metrics.NewGlobal(conf, sinks)
	if err != nil {
		return nil, fmt.Errorf("telemetry: %w", err)
	}
	t.m = m
	t.wg.Add(1)
	go t.loop()
	return t, nil
}

// Metrics is the go-metrics instance (also the library's global one).
func (t *Telemetry) Metrics() *metrics.Metrics { return t.m }

// AddCollector registers fn, run every Interval on the telemetry's
// goroutine (and once at once).
func (t *Telemetry) AddCollector(fn func(*metrics.Metrics)) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.collec = append(t.collec, fn)
	fn(t.m)
}

// Collect runs the collectors now (tests; GET /v1/metrics after a change).
func (t *Telemetry) Collect() {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.m.EmitRuntimeStats() // not safe to run twice at once
	for _, fn := range t.collec {
		fn(t.m)
	}
}

func (t *Telemetry) loop() {
	defer t.wg.Done()
	tick := time.NewTicker(t.cfg.Interval)
	defer tick.Stop()
	for {
		t.Collect()
		select {
		case <-t.stop:
			return
		case <-tick.C:
		}
	}
}

// Stop ends collection.
func (t *Telemetry) Stop() {
	select {
	case <-t.stop:
	default:
		close(t.stop)
	}
	t.wg.Wait()
}

// Summary is the in-memory sink's latest interval in Nomad's JSON shape
// ({Timestamp, Gauges, Points, Counters, Samples}).
func (t *Telemetry) Summary(w http.ResponseWriter, r *http.Request) (any, error) {
	return t.inmem.DisplayMetrics(w, r)
}

// Prometheus is the Prometheus text format handler, or
// ErrPrometheusDisabled.
func (t *Telemetry) Prometheus() (http.Handler, error) {
	if t.reg == nil {
		return nil, ErrPrometheusDisabled
	}
	return promhttp.HandlerFor(t.reg, promhttp.HandlerOpts{}), nil
}
