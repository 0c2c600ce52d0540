package clientsim

import (
	"slices"
	"sync"
	"sync/atomic"
	"time"
)

// Latencies are recorded round trips, sorted.
type Latencies []time.Duration

// Quantile returns the q-quantile (0 <= q <= 1, nearest rank); 0 when
// there are none.
func (l Latencies) Quantile(q float64) time.Duration {
	if len(l) == 0 {
		return 0
	}
	i := int(q*float64(len(l))+0.5) - 1
	return l[min(max(i, 0), len(l)-1)]
}

// Max is the longest round trip; 0 when there are none.
func (l Latencies) Max() time.Duration { return l.Quantile(1) }

// recorder gathers heartbeat round trips while it is on.
type recorder struct {
	total atomic.Int64 // every answered heartbeat, on or off
	mu    sync.Mutex
	on    bool
	got   []time.Duration
}

func (r *recorder) add(d time.Duration) {
	r.total.Add(1)
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.on {
		r.got = append(r.got, d)
	}
}

func (r *recorder) record(on bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if on {
		r.got = r.got[:0]
	}
	r.on = on
}

func (r *recorder) samples() Latencies {
	r.mu.Lock()
	out := slices.Clone(r.got)
	r.mu.Unlock()
	slices.Sort(out)
	return out
}
