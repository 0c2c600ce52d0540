package actors

import (
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"
)

// TestDispatcherBlockedRunHoldsOnlyItsGoroutine: a mailbox run that blocks
// never keeps another from running, and every run is run once.
func TestDispatcherBlockedRunHoldsOnlyItsGoroutine(t *testing.T) {
	d := NewDispatcher(4)
	release := make(chan struct{})
	blocked := make(chan struct{})
	d.Schedule(func() { close(blocked); <-release })
	<-blocked
	var wg sync.WaitGroup
	var mu sync.Mutex
	ran := map[int]int{}
	for i := range 100 {
		wg.Add(1)
		d.Schedule(func() {
			mu.Lock()
			ran[i]++
			mu.Unlock()
			wg.Done()
		})
	}
	wg.Wait() // the blocked run still holds its goroutine
	close(release)
	require.Len(t, ran, 100)
	for i, n := range ran {
		require.Equal(t, 1, n, "run %d", i)
	}
}

// TestDispatcherReusesIdleGoroutines: a run scheduled after another ended
// goes to the goroutine that ran it, and idle goroutines leave once they
// have waited idleTimeout.
func TestDispatcherReusesIdleGoroutines(t *testing.T) {
	before := goleak.IgnoreCurrent()
	d := NewDispatcher(1)
	done := make(chan struct{})
	d.Schedule(func() { close(done) })
	<-done
	require.Eventually(t, func() bool { return d.idle.Load() == 1 }, 5*time.Second, time.Millisecond)
	again := make(chan struct{})
	d.Schedule(func() { close(again) })
	<-again
	require.NoError(t, goleak.Find(before),
		"an idle goroutine leaves after idleTimeout")
	require.Zero(t, d.idle.Load())
}
