package alloc

import (
	"context"
	"log/slog"
	"runtime"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/troupe-dev/troupe/actors"
)

// usageActor starts a usage actor over u and returns a client for it.
func usageActor(t *testing.T, u *Usage) *usageClient {
	t.Helper()
	sys := actors.NewSystem(slog.New(slog.DiscardHandler))
	t.Cleanup(sys.Shutdown)
	pid, err := sys.Root.SpawnNamed(sys.Props("csi-usage", NewUsageActor(u, slog.New(slog.DiscardHandler))), "client/csi-usage")
	require.NoError(t, err)
	return &usageClient{root: sys.Root, pid: pid, timeout: 5 * time.Second}
}

// TestUsageLockSerialisesOneVolume: node-side work on one staged volume
// never runs twice at once; different volumes do not wait on each other.
func TestUsageLockSerialisesOneVolume(t *testing.T) {
	u := usageActor(t, newUsage())
	ctx := context.Background()
	var inFlight, most atomic.Int32
	var wg sync.WaitGroup
	for range 50 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			_, unlock, err := u.turn(ctx, "/staging/vol1", "a", false, false)
			defer unlock()
			require.NoError(t, err)
			n := inFlight.Add(1)
			for m := most.Load(); n > m && !most.CompareAndSwap(m, n); m = most.Load() {
			}
			runtime.Gosched()
			inFlight.Add(-1)
		}()
	}
	wg.Wait()
	require.EqualValues(t, 1, most.Load())

	_, unlock, err := u.turn(ctx, "/staging/vol1", "a", false, false)
	require.NoError(t, err)
	_, other, err := u.turn(ctx, "/staging/vol2", "a", false, false) // would deadlock if keys shared a lock
	require.NoError(t, err)
	other()
	unlock()
}

// TestUsageTurnsCountAndEndWithTheirWorker: the usage actor makes a
// turn's acquire or release as it grants it and answers with the users
// left; a worker whose context ends while it waits gives its place up.
func TestUsageTurnsCountAndEndWithTheirWorker(t *testing.T) {
	u := usageActor(t, newUsage())
	ctx := context.Background()
	n, done, err := u.turn(ctx, "s", "a", true, false)
	require.NoError(t, err)
	require.Equal(t, 1, n)
	done()
	n, done, err = u.turn(ctx, "s", "b", true, false)
	require.NoError(t, err)
	require.Equal(t, 2, n)

	waiting, cancel := context.WithCancel(ctx)
	errs := make(chan error, 1)
	go func() {
		_, wdone, err := u.turn(waiting, "s", "a", false, true)
		wdone()
		errs <- err
	}()
	require.Eventually(t, func() bool { return queued(u, "s") == 2 }, 5*time.Second, time.Millisecond)
	cancel()
	require.ErrorIs(t, <-errs, context.Canceled)
	require.Eventually(t, func() bool { return queued(u, "s") == 1 }, 5*time.Second, time.Millisecond)
	done()

	n, done, err = u.turn(ctx, "s", "b", false, true)
	require.NoError(t, err)
	done()
	users, err := u.root.RequestFuture(u.pid, &usageUsers{Key: "s"}, time.Second).Result()
	require.NoError(t, err)
	require.Equal(t, n, users)
	require.Equal(t, 1, n, "b let go; a, whose release never got its turn, still counts")
}

// queued is how many turns on key are held or waited for.
func queued(u *usageClient, key string) int {
	n, err := u.root.RequestFuture(u.pid, &usageQueued{Key: key}, time.Second).Result()
	if err != nil {
		return -1
	}
	return n.(int)
}
