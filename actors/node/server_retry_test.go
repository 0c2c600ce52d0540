package node

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/troupe-dev/troupe/actors"
	"github.com/troupe-dev/troupe/messages"
)

// TestStatusCommitRetryBacksOff: a status change that keeps failing to
// commit is tried again after 1 s, then 2 s (statusCommitRetry), not every
// second for ever.
func TestStatusCommitRetryBacksOff(t *testing.T) {
	clock := actors.NewFakeClock(time.Unix(1000, 0))
	view := &fakeView{node: &messages.Node{ID: "n1", Status: "ready"}}
	prop := &flakyProposer{failures: 2}
	defer startNodeServer(t, clock, view, prop)()

	require.Eventually(t, func() bool { return clock.Pending() == 1 }, 5*time.Second, time.Millisecond)
	clock.Advance(3 * time.Second) // TTL and grace: down, which fails
	require.Eventually(t, func() bool { return len(prop.statuses()) == 1 && clock.Pending() == 1 }, 5*time.Second, time.Millisecond)
	clock.Advance(time.Second) // the first retry, which fails too
	require.Eventually(t, func() bool { return len(prop.statuses()) == 2 && clock.Pending() == 1 }, 5*time.Second, time.Millisecond)
	clock.Advance(time.Second)
	require.Never(t, func() bool { return len(prop.statuses()) > 2 }, 50*time.Millisecond, time.Millisecond, "the second retry waits 2 s")
	clock.Advance(time.Second)
	require.Eventually(t, func() bool { return len(prop.statuses()) == 3 }, 5*time.Second, time.Millisecond)
	require.Equal(t, []string{"down", "down", "down"}, prop.statuses())
}

func TestStatusCommitRetryIsBounded(t *testing.T) {
	d, ok := statusCommitRetry.Delay(1, 0)
	require.True(t, ok)
	require.Equal(t, time.Second, d)
	d, _ = statusCommitRetry.Delay(10, time.Hour)
	require.Equal(t, 30*time.Second, d)
	_, ok = statusCommitRetry.Delay(10, 24*time.Hour)
	require.False(t, ok, "given up after a day")
}
