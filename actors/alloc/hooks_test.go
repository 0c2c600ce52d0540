package alloc

import (
	"context"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/troupe-dev/troupe/messages"
)

// updateCounter is an update hook that counts the updates it saw.
type updateCounter struct{ n atomic.Int32 }

func (u *updateCounter) Name() string { return "update_counter" }

func (u *updateCounter) Update(_ context.Context, a *messages.Allocation) error {
	u.n.Add(1)
	return nil
}

// TestUpdateHookSeesUpdates: an update hook is told of the updates that
// come while the tasks run, the stop among them.
func TestUpdateHookSeesUpdates(t *testing.T) {
	h := newHarness(t)
	uc := &updateCounter{}
	h.hooks = []Hook{uc}
	a := testAlloc("service", map[string]any{}, nil)
	h.spawn(a)
	h.waitFor("running", status(statusRunning))
	h.sys.Root.Send(allocPID(a), &messages.UpdateAlloc{Alloc: a})
	require.Eventually(t, func() bool { return uc.n.Load() == 1 }, 5*time.Second, time.Millisecond)
	h.stop(a)
	h.waitFor("complete", status(statusComplete))
	require.Eventually(t, func() bool { return uc.n.Load() == 2 }, 5*time.Second, time.Millisecond)
	waitTerminal(t, h, a.ID)
}
