package containerd

import (
	"context"
	"fmt"
	"time"

	cgroup1stats "github.com/containerd/cgroups/v3/cgroup1/stats"
	cgroup2stats "github.com/containerd/cgroups/v3/cgroup2/stats"
	"github.com/containerd/containerd/v2/client"
	"github.com/containerd/containerd/v2/pkg/namespaces"
	"github.com/containerd/errdefs"
	"github.com/containerd/errdefs/pkg/errgrpc"
	"github.com/containerd/typeurl/v2"

	"github.com/troupe-dev/troupe/runtime/driver"
)

// Backoff of a watcher that cannot reach containerd.
const (
	minRetryDelay = 100 * time.Millisecond
	maxRetryDelay = 5 * time.Second
)

// watch runs a goroutine the driver owns that waits for t's exit and
// finishes t. It returns false, starting nothing, after Shutdown.
func (d *Driver) watch(t *task) bool {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.closed {
		return false
	}
	d.wg.Add(1)
	go func() {
		defer d.wg.Done()
		if r := d.await(d.ctx, t); r != nil {
			d.finish(t, r)
		}
	}()
	return true
}

// await waits for t's exit, retrying with backoff while containerd is
// unreachable (it may be restarting: tasks outlive it), up to
// Config.ReconnectTimeout. It returns nil when ctx ends first.
func (d *Driver) await(ctx context.Context, t *task) *driver.ExitResult {
	ctx = namespaces.WithNamespace(ctx, t.state.Namespace)
	var lostSince time.Time
	delay := minRetryDelay
	for {
		st, err := waitOnce(ctx, t.task)
		switch {
		case ctx.Err() != nil:
			return nil
		case err == nil:
			return d.exitResult(ctx, t, st.ExitCode())
		case errdefs.IsNotFound(err):
			return &driver.ExitResult{ExitCode: -1,
				Err: fmt.Errorf("%w: %s: containerd lost the task: %w", driver.ErrTaskNotFound, t.id, err)}
		}
		if lostSince.IsZero() {
			lostSince = time.Now()
		}
		if time.Since(lostSince) > d.cfg.ReconnectTimeout {
			return &driver.ExitResult{ExitCode: -1, Err: fmt.Errorf("%w: %s: %w", ErrWaitLost, t.id, err)}
		}
		d.log.Warn("waiting for task failed, retrying", "task", t.id, "in", delay, "err", err)
		timer := time.NewTimer(delay)
		select {
		case <-ctx.Done():
			timer.Stop()
			return nil
		case <-timer.C:
		}
		delay = min(2*delay, maxRetryDelay)
	}
}

// waitOnce waits for the task's exit status once.
func waitOnce(ctx context.Context, tsk client.Task) (client.ExitStatus, error) {
	ch, err := tsk.Wait(ctx)
	if err != nil {
		return client.ExitStatus{}, errgrpc.ToNative(err)
	}
	st := <-ch // Wait's goroutine sends once, also when ctx ends
	if err := st.Error(); err != nil {
		return st, errgrpc.ToNative(err)
	}
	return st, nil
}

// exitResult turns an exit status into a result. The shim reports a death
// by signal as 128+signal, so a code in 129..192 is read as a signal. The
// OOM killer shows in the task's cgroup, which lives until the task is
// deleted.
func (d *Driver) exitResult(ctx context.Context, t *task, status uint32) *driver.ExitResult {
	code := int(status)
	r := &driver.ExitResult{ExitCode: code}
	if code > 128 && code <= 128+64 {
		r.Signal = code - 128
	}
	oom, err := oomKilled(ctx, t.task)
	if err != nil {
		d.log.Warn("reading the task's OOM count", "task", t.id, "err", err)
	}
	r.OOMKilled = oom
	return r
}

// oomKilled reports whether the kernel OOM-killed a process of the task's
// cgroup (v1 memory.oom_control or v2 memory.events "oom_kill").
func oomKilled(ctx context.Context, tsk client.Task) (bool, error) {
	m, err := tsk.Metrics(ctx)
	if err != nil {
		return false, err
	}
	if m.GetData() == nil {
		return false, nil
	}
	v, err := typeurl.UnmarshalAny(m.GetData())
	if err != nil {
		return false, err
	}
	switch s := v.(type) {
	case *cgroup1stats.Metrics:
		return s.GetMemoryOomControl().GetOomKill() > 0, nil
	case *cgroup2stats.Metrics:
		return s.GetMemoryEvents().GetOomKill() > 0, nil
	}
	return false, fmt.Errorf("unknown metrics type %T", v)
}
