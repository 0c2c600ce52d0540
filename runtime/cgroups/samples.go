package cgroups

import (
	"sync"
	"time"

	"github.com/troupe-dev/troupe/runtime/driver"
)

// Samples keeps each task's last usage sample, so that a driver's
// TaskStats gives CPU percentages over the time since the previous read.
// The zero value is ready; it is safe for concurrent use.
type Samples struct {
	mu   sync.Mutex
	last map[string]*Stats
}

// Usage records s as task id's latest sample and returns the usage since
// the one before (the first: since the task started).
func (p *Samples) Usage(id string, s *Stats, started time.Time) *driver.TaskUsage {
	p.mu.Lock()
	prev := p.last[id]
	if p.last == nil {
		p.last = map[string]*Stats{}
	}
	p.last[id] = s
	p.mu.Unlock()
	if prev == nil {
		prev = &Stats{At: started}
	}
	return Usage(prev, s)
}

// Forget drops task id's sample (a new run, or the task is gone).
func (p *Samples) Forget(id string) {
	p.mu.Lock()
	delete(p.last, id)
	p.mu.Unlock()
}
