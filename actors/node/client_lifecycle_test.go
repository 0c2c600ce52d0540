package node

import (
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/troupe-dev/troupe/actors"
	"github.com/troupe-dev/troupe/messages"
	"github.com/troupe-dev/troupe/runtime/clientstate"
)

var errStateRead = errors.New("bbolt: transient read error")

// failingStore is the client state file with NextAllocsErrs reads of the
// allocations failing first; it counts the reads.
type failingStore struct {
	*clientstate.DB
	mu             sync.Mutex
	NextAllocsErrs int
	reads          int
}

var _ AllocStore = (*failingStore)(nil)

func (s *failingStore) Allocs() ([]*clientstate.StoredAlloc, error) {
	s.mu.Lock()
	s.reads++
	fail := s.NextAllocsErrs > 0
	if fail {
		s.NextAllocsErrs--
	}
	s.mu.Unlock()
	if fail {
		return nil, errStateRead
	}
	return s.DB.Allocs()
}

func (s *failingStore) readCount() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.reads
}

func (r *recorder) spawns(id string) int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.spawned[id]
}

// TestClientRetriesStateReadWithBackoff: a state file that cannot be read
// at start is read again with backoff on the injected clock; the client
// neither registers nor starts anything as if nothing were stored, and
// restores the stored allocation once the read succeeds.
func TestClientRetriesStateReadWithBackoff(t *testing.T) {
	srv, clock := &fakeServer{}, actors.NewFakeClock(time.Unix(0, 0))
	rec := &recorder{spawned: map[string]int{}, got: map[string][]*messages.Allocation{}}
	var store *failingStore
	startTestClient(t, srv, clock, rec, func(s *ClientSpec) {
		db := s.DB.(*clientstate.DB)
		a := allocWith("a1", 0)
		a.ClientStatus = "running"
		db.PutAlloc(a)
		db.Flush()
		store = &failingStore{DB: db, NextAllocsErrs: 2}
		s.DB = store
		s.Retry = actors.Retry{Initial: time.Second, Multiplier: 2} // 1 s, then 2 s
	})
	waitRead := func(n int) {
		t.Helper()
		require.Eventually(t, func() bool { return store.readCount() == n && clock.Pending() == 1 }, 5*time.Second, time.Millisecond)
		r, _ := srv.calls()
		require.Zero(t, r, "no registration before the state file was read")
		require.Zero(t, rec.spawns("a1"), "nothing started as if nothing were stored")
	}
	waitRead(1)
	// The timer still pending, then the count: a retry that ran would
	// have read before it re-armed.
	clock.Advance(time.Second - time.Millisecond)
	require.Equal(t, 1, clock.Pending())
	require.Equal(t, 1, store.readCount(), "the first retry waits the backoff's first interval")
	clock.Advance(time.Millisecond)
	waitRead(2)
	clock.Advance(2*time.Second - time.Millisecond)
	require.Equal(t, 1, clock.Pending())
	require.Equal(t, 2, store.readCount(), "the backoff grows")
	clock.Advance(time.Millisecond)
	require.Eventually(t, func() bool { r, _ := srv.calls(); return r == 1 }, 5*time.Second, time.Millisecond)
	require.Equal(t, 3, store.readCount())
	require.Equal(t, 1, rec.spawns("a1"), "the stored allocation is restored, once")
}

// TestClientResendSkipsForgottenAllocs: back in contact after failed
// heartbeats, the client sends again the reports of the allocations it
// runs, not those of allocations it has forgotten.
func TestClientResendSkipsForgottenAllocs(t *testing.T) {
	srv, clock := &fakeServer{}, actors.NewFakeClock(time.Unix(0, 0))
	rec := &recorder{spawned: map[string]int{}, got: map[string][]*messages.Allocation{}}
	sys, pid := newTestClient(t, srv, clock, rec)
	require.Eventually(t, func() bool { return clock.Pending() == 1 }, 5*time.Second, time.Millisecond) // the heartbeat, at 5 s
	sys.Root.Send(pid, &messages.SetClientAllocs{NodeID: "n1", Index: 1, Allocs: []*messages.Allocation{allocWith("a1", 0), allocWith("a2", 0)}})
	sys.Root.Send(pid, &messages.AllocUpdated{Alloc: &messages.Allocation{ID: "a1", ClientStatus: "complete"}})
	sys.Root.Send(pid, &messages.AllocUpdated{Alloc: &messages.Allocation{ID: "a2", ClientStatus: "running"}})
	require.Eventually(t, func() bool { return clock.Pending() == 2 }, 5*time.Second, time.Millisecond)
	clock.Advance(time.Second) // 1 s: the batch goes
	require.Eventually(t, func() bool { _, u := srv.calls(); return u == 1 }, 5*time.Second, time.Millisecond)
	require.Eventually(t, func() bool { return clock.Pending() == 1 }, 5*time.Second, time.Millisecond)

	// a1 let go of the host and the servers dropped it: it is forgotten.
	sys.Root.Send(pid, &actors.AllocReleased{AllocID: "a1"})
	sys.Root.Send(pid, &messages.SetClientAllocs{NodeID: "n1", Index: 2, Allocs: []*messages.Allocation{allocWith("a2", 0)}})

	srv.mu.Lock()
	srv.heartbeatErr = errors.New("no route to server")
	srv.mu.Unlock()
	clock.Advance(4 * time.Second) // 5 s: the heartbeat fails, retried at 6 s
	require.Eventually(t, func() bool { return clock.Pending() == 1 }, 5*time.Second, time.Millisecond)
	srv.mu.Lock()
	srv.heartbeatErr = nil
	srv.mu.Unlock()
	clock.Advance(time.Second) // 6 s: back in contact, every report again
	require.Eventually(t, func() bool { return clock.Pending() == 2 }, 5*time.Second, time.Millisecond)
	clock.Advance(time.Second)
	require.Eventually(t, func() bool { _, u := srv.calls(); return u == 2 }, 5*time.Second, time.Millisecond)
	srv.mu.Lock()
	defer srv.mu.Unlock()
	require.Len(t, srv.updates[1], 1, "only the allocation still known is sent again")
	require.Equal(t, "a2", srv.updates[1][0].GetID())
	require.Equal(t, "running", srv.updates[1][0].GetClientStatus())
}
