package containerd

import (
	"context"
	"fmt"
	"sync"
	"time"

	cgroup1stats "github.com/containerd/cgroups/v3/cgroup1/stats"
	cgroup2stats "github.com/containerd/cgroups/v3/cgroup2/stats"
	"github.com/containerd/containerd/v2/pkg/namespaces"
	"github.com/containerd/typeurl/v2"

	"github.com/troupe-dev/troupe/runtime/cgroups"
	"github.com/troupe-dev/troupe/runtime/driver"
)

var _ driver.Statser = (*Driver)(nil)

// lastSamples keeps each task's previous usage sample (CPU percentages
// are over the time between two).
type lastSamples struct {
	mu   sync.Mutex
	last map[string]*cgroups.Stats
}

// TaskStats implements driver.Statser from the metrics of the task's
// cgroup, which runc made and containerd's shim reads (v1 or v2).
func (d *Driver) TaskStats(ctx context.Context, taskID string) (*driver.TaskUsage, error) {
	t, err := d.tasks.Get(taskID)
	if err != nil {
		return nil, err
	}
	ls := d.platform.samples
	if t.Exited() {
		ls.mu.Lock()
		delete(ls.last, taskID)
		ls.mu.Unlock()
		return nil, fmt.Errorf("%w: %s has exited", driver.ErrTaskNotFound, taskID)
	}
	ctx = namespaces.WithNamespace(ctx, t.Data.state.Namespace)
	m, err := t.Data.task.Metrics(ctx)
	if err != nil {
		return nil, fmt.Errorf("containerd: %s: metrics: %w", taskID, err)
	}
	at := time.Now()
	if ts := m.GetTimestamp(); ts != nil {
		at = ts.AsTime()
	}
	v, err := typeurl.UnmarshalAny(m.GetData())
	if err != nil {
		return nil, fmt.Errorf("containerd: %s: metrics: %w", taskID, err)
	}
	var s *cgroups.Stats
	switch mv := v.(type) {
	case *cgroup1stats.Metrics:
		s = cgroups.FromV1(mv, at)
	case *cgroup2stats.Metrics:
		s = cgroups.FromV2(mv, at)
	default:
		return nil, fmt.Errorf("%w: %s: metrics of type %T", driver.ErrStatsNotSupported, taskID, v)
	}
	ls.mu.Lock()
	prev := ls.last[taskID]
	ls.last[taskID] = s
	ls.mu.Unlock()
	if prev == nil {
		prev = &cgroups.Stats{At: t.Handle.StartedAt}
	}
	return cgroups.Usage(prev, s), nil
}
