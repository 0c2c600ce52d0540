package alloc

import (
	"runtime"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestUsageLockSerialisesOneVolume: node-side work on one staged volume
// never runs twice at once; different volumes do not wait on each other.
func TestUsageLockSerialisesOneVolume(t *testing.T) {
	u := NewUsage()
	var inFlight, most atomic.Int32
	var wg sync.WaitGroup
	for range 50 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			unlock := u.Lock("/staging/vol1")
			defer unlock()
			n := inFlight.Add(1)
			for m := most.Load(); n > m && !most.CompareAndSwap(m, n); m = most.Load() {
			}
			runtime.Gosched()
			inFlight.Add(-1)
		}()
	}
	wg.Wait()
	require.EqualValues(t, 1, most.Load())

	unlock := u.Lock("/staging/vol1")
	other := u.Lock("/staging/vol2") // would deadlock if keys shared a lock
	other()
	unlock()
}
