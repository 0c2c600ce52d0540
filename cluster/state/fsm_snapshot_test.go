package state

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"testing"
	"time"

	"github.com/hashicorp/raft"
	"github.com/stretchr/testify/require"
	"google.golang.org/protobuf/proto"

	"github.com/troupe-dev/troupe/messages"
)

// bufSink is an in-memory raft.SnapshotSink.
type bufSink struct {
	bytes.Buffer
	closed, canceled bool
}

func (s *bufSink) ID() string    { return "test" }
func (s *bufSink) Cancel() error { s.canceled = true; return nil }
func (s *bufSink) Close() error  { s.closed = true; return nil }

func persist(t *testing.T, f *FSM) *bufSink {
	snap, err := f.Snapshot()
	require.NoError(t, err)
	sink := &bufSink{}
	require.NoError(t, snap.Persist(sink))
	snap.Release()
	require.True(t, sink.closed)
	return sink
}

// requireSameState compares every table of two snapshots.
func requireSameState(t *testing.T, want, got *Snap) {
	t.Helper()
	protoEqual := func(name string, w, g []proto.Message) {
		require.Len(t, g, len(w), name)
		for i := range w {
			require.True(t, proto.Equal(w[i], g[i]), "%s[%d]: want %v, got %v", name, i, w[i], g[i])
		}
	}
	protoEqual("jobs", msgs(want.Jobs()), msgs(got.Jobs()))
	for _, j := range want.Jobs() {
		protoEqual("versions", msgs(want.JobVersions(j.Namespace, j.ID)), msgs(got.JobVersions(j.Namespace, j.ID)))
		for _, v := range want.JobVersions(j.Namespace, j.ID) {
			w, g := want.JobSubmission(j.Namespace, j.ID, v.Version), got.JobSubmission(j.Namespace, j.ID, v.Version)
			require.True(t, proto.Equal(w, g), "submission of %s v%d: want %v, got %v", j.ID, v.Version, w, g)
		}
		protoEqual("job allocs", msgs(want.AllocsByJob(j.Namespace, j.ID)), msgs(got.AllocsByJob(j.Namespace, j.ID)))
	}
	protoEqual("evals", msgs(want.Evals()), msgs(got.Evals()))
	protoEqual("allocs", msgs(want.Allocs()), msgs(got.Allocs()))
	protoEqual("nodes", msgs(want.Nodes()), msgs(got.Nodes()))
	require.Equal(t, want.LiveNodes(), got.LiveNodes(), "live nodes")
	for _, n := range want.Nodes() {
		protoEqual("node allocs", msgs(want.AllocsByNode(n.ID)), msgs(got.AllocsByNode(n.ID)))
		wc, wm, wd := want.NodeUsage(n.ID)
		gc, gm, gd := got.NodeUsage(n.ID)
		require.Equal(t, []int64{wc, wm, wd, want.liveAllocs(n.ID)}, []int64{gc, gm, gd, got.liveAllocs(n.ID)}, "usage of %s", n.ID)
		require.Equal(t, want.DisconnectWindow(n.ID), got.DisconnectWindow(n.ID), "disconnect window of %s", n.ID)
	}
	for _, e := range want.Evals() {
		protoEqual("eval allocs", msgs(want.AllocsByEval(e.ID)), msgs(got.AllocsByEval(e.ID)))
	}
	protoEqual("volumes", msgs(want.CSIVolumes()), msgs(got.CSIVolumes()))
	protoEqual("plugins", msgs(want.CSIPlugins()), msgs(got.CSIPlugins()))
	protoEqual("node pools", msgs(want.NodePools()), msgs(got.NodePools()))
	for _, p := range want.CSIPlugins() {
		protoEqual("plugin volumes", msgs(want.CSIVolumesByPlugin(p.ID)), msgs(got.CSIVolumesByPlugin(p.ID)))
	}
}

func msgs[T proto.Message](in []T) []proto.Message {
	out := make([]proto.Message, len(in))
	for i, m := range in {
		out[i] = m
	}
	return out
}

func TestSnapshotRestoreRoundTrip(t *testing.T) {
	tests := []struct {
		name   string
		allocs int
	}{
		{"small", 3},
		{"several chunks", 3*snapshotChunk + 17},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h := seedStore(t)
			for i := range 7 {
				h.apply(registerJob(testJob("web", int32(200+i), 100), testEval(fmt.Sprintf("e-v%d", i), "web", "complete")))
			}
			h.apply(registerNode(testNode("big", 1<<40, 1<<40)))
			p := &messages.ApplyPlan{EvalID: "e-big"}
			for i := range tt.allocs {
				p.Place = append(p.Place, testAlloc(fmt.Sprintf("b%06d", i), "web", "big", "e-big", 1, 1))
			}
			h.apply(plan(p))
			h.apply(deregister("web", false, testEval("e-stop", "web", messages.EvalStatusPending)))

			sink := persist(t, h.fsm)
			restored := NewFSM(NewStore(), nil)
			restored.SetClock(func() time.Time { return time.Unix(0, testNow) })
			var events []Event
			restored.OnApply(func(ev Event) { events = append(events, ev) })
			require.NoError(t, restored.Restore(io.NopCloser(bytes.NewReader(sink.Bytes()))))

			requireSameState(t, h.snap(), restored.Store().Snapshot())
			require.Equal(t, h.snap().Index(), restored.Store().Snapshot().Index(), "index restored")
			require.Len(t, events, 1)
			require.Equal(t, h.index, events[0].Index)
			require.Equal(t, []string{"e-stop", "e-web"}, events[0].EvalsReady)
			require.Equal(t, []string{"big", "n1", "n2"}, events[0].NodeUpdated)
			require.Equal(t, []string{"default/web", "prod/web"}, events[0].JobsChanged)

			// The restored FSM keeps applying from where it was.
			res := restored.Apply(rawLog(h.index+1, mustMarshal(t, plan(&messages.ApplyPlan{
				Place: []*messages.Allocation{testAlloc("after", "web", "n1", "e-x", 1, 1)},
			}))))
			require.Equal(t, []string{"after"}, res.(*messages.ApplyPlanResult).Placed)
		})
	}
}

func TestRestoreReplacesStateAndWakesWaiters(t *testing.T) {
	h := seedStore(t)
	sink := persist(t, h.fsm)

	other := newHarness(t)
	other.apply(registerNode(testNode("stale", 1, 1)))
	oldSnap := other.snap()
	require.NoError(t, other.fsm.Restore(io.NopCloser(bytes.NewReader(sink.Bytes()))))
	require.Nil(t, other.snap().NodeByID("stale"), "old state gone")
	require.NotNil(t, oldSnap.NodeByID("stale"), "old snapshots unaffected")
	requireSameState(t, h.snap(), other.snap())
}

func TestRestoreRejectsGarbage(t *testing.T) {
	f := NewFSM(NewStore(), nil)
	err := f.Restore(io.NopCloser(bytes.NewReader([]byte{0x05, 0xff, 0xff})))
	require.True(t, errors.Is(err, ErrBadSnapshot))
}

type failingSink struct{ bufSink }

func (s *failingSink) Write([]byte) (int, error) { return 0, errors.New("disk full") }

func TestPersistCancelsOnWriteError(t *testing.T) {
	h := seedStore(t)
	snap, err := h.fsm.Snapshot()
	require.NoError(t, err)
	sink := &failingSink{}
	require.Error(t, snap.Persist(sink))
	require.True(t, sink.canceled)
	require.False(t, sink.closed)
}

var _ raft.SnapshotSink = (*bufSink)(nil)

func mustMarshal(t *testing.T, m proto.Message) []byte {
	b, err := proto.Marshal(m)
	require.NoError(t, err)
	return b
}
