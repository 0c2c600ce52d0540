package agent

import (
	"testing"
	"time"

	"github.com/asynkron/protoactor-go/actor"
	"github.com/stretchr/testify/require"
)

// TestRestoredNodeActorStartsBeforeClient restarts a server that is also
// a client and holds the start between the server and the client until
// raft has restored the node and the new leader has spawned its node
// actor, which at once looks up where the node's client lives: the window
// that opens at every restart, made wide. The lookup reads only what was
// fixed before the server's actors started, so `go test -race` has
// nothing to report while the client starts meanwhile.
func TestRestoredNodeActorStartsBeforeClient(t *testing.T) {
	dir := t.TempDir()
	a := startAgent(t, testConfig(t, dir))
	id := a.Node().GetID()
	before := a.Store().Snapshot().NodeByID(id).GetModifyIndex()
	require.NoError(t, a.Shutdown())

	b, err := New(testConfig(t, dir))
	require.NoError(t, err)
	defer b.Shutdown()
	require.NoError(t, b.boot())
	for _, step := range b.startSteps() {
		require.NoError(t, step.run(), step.name)
		if step.name == "server" {
			// Wait on the actor system's process table, not the actor
			// tree: the tree's phases would order the node actor's first
			// message before the client's start.
			nodeActor := actor.NewPID(b.sys.Address(), "server/nodes/"+id)
			require.Eventually(t, func() bool {
				_, ok := b.sys.ProcessRegistry.Get(nodeActor)
				return ok
			}, 20*time.Second, time.Millisecond, "the new leader never spawned the restored node's actor")
		}
	}
	require.Equal(t, id, b.Node().GetID(), "the node keeps its ID")
	require.Eventually(t, func() bool {
		n := b.Store().Snapshot().NodeByID(id)
		return n.GetStatus() == "ready" && n.GetModifyIndex() > before
	}, 20*time.Second, 10*time.Millisecond, "the restarted client never registered")
}
