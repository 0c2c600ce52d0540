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

// watch has a goroutine the driver owns wait for t's exit and finish t.
// It returns false, starting nothing, after Shutdown.
func (d *Driver) watch(t *task) bool {
	return d.tasks.Watch(t, func(ctx context.Context) *driver.ExitResult { return d.await(ctx, t) })
}

// await waits for t's exit, retrying with backoff while containerd is
// unreachable (it may be restarting: tasks outlive it), up to
// Config.ReconnectTimeout. It returns nil when ctx ends first.
func (d *Driver) await(ctx context.Context, t *task) *driver.ExitResult {
	ctx = namespaces.WithNamespace(ctx, t.Data.state.Namespace)
	var lostSince time.Time
	delay := minRetryDelay
	for {
		st, err := waitOnce(ctx, t.Data.task)
		switch {
		case ctx.Err() != nil:
			return nil
		case err == nil:
			return d.exitResult(ctx, t, st.ExitCode())
		case errdefs.IsNotFound(err):
			return &driver.ExitResult{ExitCode: -1,
				Err: fmt.Errorf("%w: %s: containerd lost the task: %w", driver.ErrTaskNotFound, t.ID, err)}
		}
		if lostSince.IsZero() {
			lostSince = time.Now()
		}
		if time.Since(lostSince) > d.cfg.ReconnectTimeout {
			return &driver.ExitResult{ExitCode: -1, Err: fmt.Errorf("%w: %s: %w", ErrWaitLost, t.ID, err)}
		}
		d.log.Warn("waiting for task failed, retrying", "task", t.ID, "in", delay, "err", err)
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
	oom, err := oomKilled(ctx, t.Data.task)
	if err != nil {
		d.log.Warn("reading the task's OOM count", "task", t.ID, "err", err)
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
