package agent

import (
	"context"
	"testing"
	"time"

	"github.com/troupe-dev/troupe/cluster/state"
)

// TestWaitAppliedIsBounded: a server whose replica never applies a write
// it forwarded (cut off from the leader right after) still answers, once
// appliedWait has passed, instead of holding the client for ever.
func TestWaitAppliedIsBounded(t *testing.T) {
	old := appliedWait
	appliedWait = 20 * time.Millisecond
	defer func() { appliedWait = old }()
	a := &Agent{store: state.NewStore(), log: testLogger(t)}
	done := make(chan struct{})
	go func() {
		a.waitApplied(context.Background(), 1000) // never applied
		close(done)
	}()
	select {
	case <-done:
	case <-time.After(time.Minute):
		t.Fatal("waitApplied did not give up")
	}
}
