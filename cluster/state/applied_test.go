package state

import (
	"bytes"
	"context"
	"io"
	"testing"
	"time"

	"github.com/hashicorp/raft"
	"github.com/stretchr/testify/require"

	"github.com/troupe-dev/troupe/messages"
)

// TestWaitAppliedEveryEntry applies entries that change different tables,
// or none, and checks that each one moves the applied index and wakes a
// waiter for it, while the indexes blocking queries watch move only with
// their tables.
func TestWaitAppliedEveryEntry(t *testing.T) {
	h := seedStore(t)
	h.apply(registerVolume(testVolume("v1", false)))
	blockingTables := []string{TableJobs, TableEvals, TableAllocs, TableNodes}
	tests := []struct {
		name string
		// entry applies the entry at index and returns its FSM result.
		entry func(index uint64) any
		// moves says whether the blocking-query tables' index moves.
		moves bool
	}{
		{name: "volume only", entry: func(uint64) any { return h.apply(registerVolume(testVolume("v2", false))) }},
		{name: "volume claim", entry: func(uint64) any {
			return h.apply(claimVolume("v1", testClaim("a1", "n1", "write", "single-node-writer")))
		}},
		{name: "plugin only", entry: func(uint64) any {
			return h.apply(upsertPlugins("n1", nil, []*messages.CSIInfo{testInstance("hostpath", true)}))
		}},
		{name: "failing command changes nothing", entry: func(uint64) any { return h.apply(deregisterVolume("nope", false)) }},
		{name: "undecodable entry", entry: func(index uint64) any {
			h.index = index
			return h.fsm.Apply(rawLog(index, []byte{0xff, 0xff}))
		}},
		{name: "no command (noop entry)", entry: func(index uint64) any {
			h.index = index
			return h.fsm.Apply(&raft.Log{Index: index, Type: raft.LogNoop})
		}},
		{name: "node", entry: func(uint64) any { return h.apply(registerNode(testNode("n3", 1, 1))) }, moves: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			store := h.fsm.Store()
			next := h.index + 1
			blockingBefore := store.Snapshot().Index(blockingTables...)
			short, cancel := context.WithTimeout(t.Context(), 20*time.Millisecond)
			defer cancel()
			require.ErrorIs(t, store.WaitApplied(short, next), context.DeadlineExceeded, "waited past an entry not yet applied")

			done := make(chan error, 1)
			go func() { done <- store.WaitApplied(t.Context(), next) }()
			tt.entry(next)
			select {
			case err := <-done:
				require.NoError(t, err)
			case <-time.After(5 * time.Second):
				t.Fatalf("WaitApplied(%d) did not return after the entry was applied", next)
			}
			require.Equal(t, next, store.AppliedIndex())
			require.NoError(t, store.WaitApplied(t.Context(), next-1), "an older index is applied too")
			if tt.moves {
				require.Equal(t, next, store.Snapshot().Index(blockingTables...))
			} else {
				require.Equal(t, blockingBefore, store.Snapshot().Index(blockingTables...),
					"the blocking-query index moved for an entry that touches none of its tables")
			}
		})
	}
}

// TestWaitAppliedRestore checks that a restored snapshot sets the applied
// index to its own and wakes the waiters of that index.
func TestWaitAppliedRestore(t *testing.T) {
	h := seedStore(t)
	sink := persist(t, h.fsm)

	fresh := NewFSM(NewStore(), nil)
	require.Zero(t, fresh.Store().AppliedIndex())
	done := make(chan error, 1)
	go func() { done <- fresh.Store().WaitApplied(t.Context(), h.index) }()
	require.NoError(t, fresh.Restore(io.NopCloser(bytes.NewReader(sink.Bytes()))))
	select {
	case err := <-done:
		require.NoError(t, err)
	case <-time.After(5 * time.Second):
		t.Fatal("WaitApplied did not return after the restore")
	}
	require.Equal(t, h.index, fresh.Store().AppliedIndex())
}

// TestWaitAppliedContextEnds checks that a waiter gives up with the
// context's error.
func TestWaitAppliedContextEnds(t *testing.T) {
	s := NewStore()
	ctx, cancel := context.WithCancel(t.Context())
	done := make(chan error, 1)
	go func() { done <- s.WaitApplied(ctx, 1) }()
	cancel()
	select {
	case err := <-done:
		require.ErrorIs(t, err, context.Canceled)
	case <-time.After(5 * time.Second):
		t.Fatal("WaitApplied did not return when its context ended")
	}
}
