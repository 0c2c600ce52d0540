package agent

import (
	"bufio"
	"os"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/troupe-dev/troupe/api"
)

// HostStatsInterval is how often the client samples its host's CPU, as
// Nomad's telemetry collection_interval (1s): /v1/client/stats answers
// each core's use over the last interval.
const HostStatsInterval = time.Second

// cpuTimes are one core's cumulative times from /proc/stat, in ticks.
type cpuTimes struct {
	name                      string
	user, system, idle, total uint64
}

// cpuSampler keeps the host's last /proc/stat reading and each core's use
// between it and the one before.
type cpuSampler struct {
	path string
	mu   sync.Mutex
	prev []cpuTimes
	last []*api.HostCPUStats
}

func newCPUSampler(path string) *cpuSampler { return &cpuSampler{path: path} }

// sample reads the file and computes each core's use since the previous
// reading (since boot the first time).
func (s *cpuSampler) sample() error {
	cur, err := readCPUTimes(s.path)
	if err != nil {
		return err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	prev := map[string]cpuTimes{}
	for _, p := range s.prev {
		prev[p.name] = p
	}
	out := make([]*api.HostCPUStats, 0, len(cur))
	for _, c := range cur {
		p := prev[c.name]
		if c.total < p.total { // counters reset (a hot-plugged core)
			p = cpuTimes{}
		}
		total := float64(c.total - p.total)
		st := &api.HostCPUStats{CPU: c.name}
		if total > 0 {
			st.User = float64(c.user-p.user) / total * 100
			st.System = float64(c.system-p.system) / total * 100
			st.Idle = float64(c.idle-p.idle) / total * 100
			st.Total = 100 - st.Idle
		}
		out = append(out, st)
	}
	s.prev, s.last = cur, out
	return nil
}

// stats is each core's use over the last interval (sampling once first
// when nothing was sampled yet).
func (s *cpuSampler) stats() []*api.HostCPUStats {
	s.mu.Lock()
	last := s.last
	s.mu.Unlock()
	if last == nil {
		if s.sample() != nil {
			return nil
		}
		s.mu.Lock()
		last = s.last
		s.mu.Unlock()
	}
	out := make([]*api.HostCPUStats, len(last))
	for i, st := range last {
		c := *st
		out[i] = &c
	}
	return out
}

// ticksConsumed is the MHz the cores used: each one's busy share of its
// frequency.
func ticksConsumed(cores []*api.HostCPUStats, mhz float64) float64 {
	var sum float64
	for _, c := range cores {
		sum += c.Total / 100 * mhz
	}
	return sum
}

// readCPUTimes reads the per-core lines ("cpuN ...") of a /proc/stat
// file. Idle counts iowait, as the kernel's own tools do.
func readCPUTimes(path string) ([]cpuTimes, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	var out []cpuTimes
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 64<<10), 1<<20) // the intr line is long
	for sc.Scan() {
		fields := strings.Fields(sc.Text())
		if len(fields) < 5 || !strings.HasPrefix(fields[0], "cpu") || fields[0] == "cpu" {
			continue
		}
		var v [10]uint64
		for i := 1; i < len(fields) && i <= len(v); i++ {
			v[i-1], _ = strconv.ParseUint(fields[i], 10, 64)
		}
		// user nice system idle iowait irq softirq steal guest guest_nice;
		// guest time is already counted in user.
		t := cpuTimes{name: fields[0], user: v[0] + v[1], system: v[2] + v[5] + v[6], idle: v[3] + v[4]}
		t.total = t.user + t.system + t.idle + v[7]
		out = append(out, t)
	}
	return out, sc.Err()
}

// sampleHost samples the host's CPU every HostStatsInterval until the
// agent stops.
func (a *Agent) sampleHost() {
	every := a.cfg.HostStatsInterval
	if every <= 0 {
		every = HostStatsInterval
	}
	for {
		fire := make(chan struct{})
		t := a.clock.AfterFunc(every, func() { close(fire) })
		select {
		case <-a.stop:
			t.Stop()
			return
		case <-fire:
		}
		_ = a.hostCPU.sample()
	}
}
