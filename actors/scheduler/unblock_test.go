package scheduler

import (
	"context"
	"log/slog"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"google.golang.org/protobuf/proto"

	"github.com/troupe-dev/troupe/actors"
	"github.com/troupe-dev/troupe/messages"
)

// csiWorld is a job with one CSI volume request ("vol1", or vol[N] per
// alloc) and the volumes and plugins of the test.
type csiWorld struct {
	job  *messages.Job
	snap *csiSnap
}

func newCSIWorld(perAlloc bool, count int32) *csiWorld {
	job := testJob("app", jobTypeService, count)
	source := "vol1"
	if perAlloc {
		source = "vol"
	}
	job.TaskGroups[0].Volumes = map[string]*messages.VolumeRequest{"data": {Name: "data", Type: "csi", Source: source,
		AccessMode: "single-node-writer", AttachmentMode: "file-system", PerAlloc: perAlloc}}
	return &csiWorld{job: job, snap: &csiSnap{MemSnapshot: newMemSnapshot(testNodes(2), job),
		vols: map[string]*messages.CSIVolume{}, plugins: map[string]*messages.CSIPlugin{}}}
}

func csiVol(id, plugin string, claims ...*messages.CSIVolumeClaim) *messages.CSIVolume {
	return &messages.CSIVolume{ID: id, Namespace: "default", PluginID: plugin, Schedulable: true, Claims: claims}
}

func writer(alloc, st string) *messages.CSIVolumeClaim {
	return &messages.CSIVolumeClaim{AllocationID: alloc, NodeID: "n00", Mode: "write", State: st}
}

func csiPlugin(id string, healthy bool) *messages.CSIPlugin {
	return &messages.CSIPlugin{ID: id, Nodes: map[string]*messages.CSIInfo{"n00": {PluginID: id, Healthy: healthy},
		"n01": {PluginID: id, Healthy: healthy}}}
}

// blocked plans the job against the world and returns the blocked
// evaluation the failed placement made, as the scheduler stores it.
func (w *csiWorld) blocked(t *testing.T) *messages.Evaluation {
	t.Helper()
	plan := processWith(t, w.snap, testEval(w.job), testOpts(1))
	require.Empty(t, plan.Place, "the placement was meant to fail")
	require.Len(t, plan.NewEvals, 1, "no blocked evaluation")
	b := plan.NewEvals[0]
	require.Equal(t, messages.EvalStatusBlocked, b.GetStatus())
	require.NotNil(t, b.GetFailedTGAllocs()["web"])
	return b
}

// TestCSIUnblocked: a blocked evaluation that failed on a volume's claims
// or its plugin's health is retried when that volume or plugin changes so
// that the placement may succeed, and only then.
func TestCSIUnblocked(t *testing.T) {
	tests := []struct {
		name     string
		perAlloc bool
		// before is the world the evaluation blocked in; after the change.
		before, after func(w *csiWorld)
		change        CSIChanged
		want          bool
	}{
		{
			name:   "writer claim freed",
			before: func(w *csiWorld) { w.snap.vols["vol1"] = csiVol("vol1", "hostpath", writer("old", "taken")) },
			after:  func(w *csiWorld) { w.snap.vols["vol1"] = csiVol("vol1", "hostpath", writer("old", "freed")) },
			change: CSIChanged{Volumes: []string{"vol1"}}, want: true,
		},
		{
			name:   "writer claim released (gone from the volume)",
			before: func(w *csiWorld) { w.snap.vols["vol1"] = csiVol("vol1", "hostpath", writer("old", "taken")) },
			after:  func(w *csiWorld) { w.snap.vols["vol1"] = csiVol("vol1", "hostpath") },
			change: CSIChanged{Volumes: []string{"vol1"}}, want: true,
		},
		{
			name:   "claim still held while it unpublishes",
			before: func(w *csiWorld) { w.snap.vols["vol1"] = csiVol("vol1", "hostpath", writer("old", "taken")) },
			after:  func(w *csiWorld) { w.snap.vols["vol1"] = csiVol("vol1", "hostpath", writer("old", "node-detached")) },
			change: CSIChanged{Volumes: []string{"vol1"}},
		},
		{
			name: "an unrelated volume's claim freed",
			before: func(w *csiWorld) {
				w.snap.vols["vol1"] = csiVol("vol1", "hostpath", writer("old", "taken"))
				w.snap.vols["other"] = csiVol("other", "hostpath", writer("x", "taken"))
			},
			after:  func(w *csiWorld) { w.snap.vols["other"] = csiVol("other", "hostpath") },
			change: CSIChanged{Volumes: []string{"other"}},
		},
		{
			name:   "missing volume registered",
			before: func(*csiWorld) {},
			after:  func(w *csiWorld) { w.snap.vols["vol1"] = csiVol("vol1", "hostpath") },
			change: CSIChanged{Volumes: []string{"vol1"}}, want: true,
		},
		{
			name:   "volume deregistered",
			before: func(w *csiWorld) { w.snap.vols["vol1"] = csiVol("vol1", "hostpath", writer("old", "taken")) },
			after:  func(w *csiWorld) { delete(w.snap.vols, "vol1") },
			change: CSIChanged{Volumes: []string{"vol1"}},
		},
		{
			name: "plugin instances became healthy",
			before: func(w *csiWorld) {
				w.snap.vols["vol1"] = csiVol("vol1", "hostpath")
				w.snap.plugins["hostpath"] = csiPlugin("hostpath", false)
			},
			after:  func(w *csiWorld) { w.snap.plugins["hostpath"] = csiPlugin("hostpath", true) },
			change: CSIChanged{Plugins: []string{"hostpath"}}, want: true,
		},
		{
			name: "plugin instances changed, none healthy",
			before: func(w *csiWorld) {
				w.snap.vols["vol1"] = csiVol("vol1", "hostpath")
				w.snap.plugins["hostpath"] = csiPlugin("hostpath", false)
			},
			after: func(w *csiWorld) {
				p := csiPlugin("hostpath", false)
				delete(p.Nodes, "n01")
				w.snap.plugins["hostpath"] = p
			},
			change: CSIChanged{Plugins: []string{"hostpath"}},
		},
		{
			name: "another plugin became healthy",
			before: func(w *csiWorld) {
				w.snap.vols["vol1"] = csiVol("vol1", "hostpath")
				w.snap.plugins["hostpath"] = csiPlugin("hostpath", false)
				w.snap.plugins["ebs"] = csiPlugin("ebs", false)
			},
			after:  func(w *csiWorld) { w.snap.plugins["ebs"] = csiPlugin("ebs", true) },
			change: CSIChanged{Plugins: []string{"ebs"}},
		},
		{
			name: "per_alloc volume of the group freed", perAlloc: true,
			before: func(w *csiWorld) {
				w.snap.plugins["hostpath"] = csiPlugin("hostpath", true)
				w.snap.vols["vol[0]"] = csiVol("vol[0]", "hostpath", writer("old", "taken"))
			},
			after:  func(w *csiWorld) { w.snap.vols["vol[0]"] = csiVol("vol[0]", "hostpath") },
			change: CSIChanged{Volumes: []string{"vol[0]"}}, want: true,
		},
		{
			name: "per_alloc volume past the group's count", perAlloc: true,
			before: func(w *csiWorld) {
				w.snap.plugins["hostpath"] = csiPlugin("hostpath", true)
				w.snap.vols["vol[0]"] = csiVol("vol[0]", "hostpath", writer("old", "taken"))
			},
			after:  func(w *csiWorld) { w.snap.vols["vol[1]"] = csiVol("vol[1]", "hostpath") },
			change: CSIChanged{Volumes: []string{"vol[1]"}},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			w := newCSIWorld(tt.perAlloc, 1)
			w.snap.plugins["hostpath"] = csiPlugin("hostpath", true)
			tt.before(w)
			b := w.blocked(t)
			tt.after(w)
			got := csiUnblocked(w.snap, []*messages.Evaluation{b}, &tt.change)
			if tt.want {
				require.Equal(t, []string{b.GetID()}, evalIDs(got))
			} else {
				require.Empty(t, got)
			}
		})
	}
}

// TestCSIUnblockedOnlyFailedGroups: a job whose failed group uses no CSI
// volume is not retried when a volume of another of its groups changes.
func TestCSIUnblockedOnlyFailedGroups(t *testing.T) {
	w := newCSIWorld(false, 1)
	w.snap.vols["vol1"] = csiVol("vol1", "hostpath", writer("old", "taken"))
	w.snap.plugins["hostpath"] = csiPlugin("hostpath", true)
	b := proto.Clone(w.blocked(t)).(*messages.Evaluation)
	b.FailedTGAllocs = map[string]*messages.AllocMetric{"other-group": {}}
	w.snap.vols["vol1"] = csiVol("vol1", "hostpath")
	require.Empty(t, csiUnblocked(w.snap, []*messages.Evaluation{b}, &CSIChanged{Volumes: []string{"vol1"}}))
}

func evalIDs(evals []*messages.Evaluation) []string {
	var out []string
	for _, e := range evals {
		out = append(out, e.GetID())
	}
	return out
}

// unblockState is a StateView over a csiSnap whose evaluations the
// proposer writes.
type unblockState struct {
	*csiSnap
	mu    sync.Mutex
	evals map[string]*messages.Evaluation
}

func (s *unblockState) EvalByID(id string) *messages.Evaluation {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.evals[id]
}

func (s *unblockState) EvalsByStatus(status string) []*messages.Evaluation {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []*messages.Evaluation
	for _, e := range s.evals {
		if e.GetStatus() == status {
			out = append(out, e)
		}
	}
	return out
}

func (s *unblockState) Apply(_ context.Context, cmd *messages.Command) (any, uint64, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, e := range cmd.GetUpsertEvals().GetEvals() {
		s.evals[e.GetID()] = e
	}
	return nil, 1, nil
}

// TestActorCSIChangedUnblocks drives the scheduler actor: the freed
// claim of the blocked evaluation's volume makes it pending again, with
// its reason (csiUnblocked's table above covers the changes that leave
// it blocked).
func TestActorCSIChangedUnblocks(t *testing.T) {
	w := newCSIWorld(false, 1)
	w.snap.plugins["hostpath"] = csiPlugin("hostpath", true)
	w.snap.vols["vol1"] = csiVol("vol1", "hostpath", writer("old", "taken"))
	b := w.blocked(t)
	st := &unblockState{csiSnap: w.snap, evals: map[string]*messages.Evaluation{b.GetID(): b}}
	sys := actors.NewSystem(slog.New(slog.DiscardHandler))
	defer sys.Shutdown()
	pid, err := sys.Root.SpawnNamed(sys.Props("scheduler", New(&Spec{State: func() StateView { return st },
		Proposer: st, Clock: actors.NewFakeClock(testNow), Logger: slog.New(slog.DiscardHandler), Seed: 1})), "scheduler")
	require.NoError(t, err)

	w.snap.vols["vol1"] = csiVol("vol1", "hostpath", writer("old", "freed"))
	sys.Root.Send(pid, &CSIChanged{Volumes: []string{"vol1"}})
	require.Eventually(t, func() bool { return st.EvalByID(b.GetID()).GetStatus() == messages.EvalStatusPending }, 5*time.Second, time.Millisecond)
	require.Equal(t, descUnblockedCSI, st.EvalByID(b.GetID()).GetStatusDescription())
}

// TestCSIUnblockedNotForOtherFailures: a group that failed for memory is
// not retried each time claims of its multi-writer volume come and go
// (that would re-plan it on every claim of a shared volume); nor when its
// plugin changes while the plugin was never the reason.
func TestCSIUnblockedNotForOtherFailures(t *testing.T) {
	w := newCSIWorld(false, 1)
	w.job.TaskGroups[0].Volumes["data"].AccessMode = "multi-node-multi-writer"
	w.job.TaskGroups[0].Tasks[0].Resources.MemoryMB = 1 << 20 // fits no node
	w.snap.AddJob(w.job)
	w.snap.vols["vol1"] = csiVol("vol1", "hostpath")
	w.snap.plugins["hostpath"] = csiPlugin("hostpath", true)
	b := w.blocked(t)
	require.NotZero(t, b.GetFailedTGAllocs()["web"].GetNodesExhausted(), "it failed for memory")
	w.snap.vols["vol1"] = csiVol("vol1", "hostpath", writer("other", "taken"))
	require.Empty(t, csiUnblocked(w.snap, []*messages.Evaluation{b}, &CSIChanged{Volumes: []string{"vol1"}}))
	require.Empty(t, csiUnblocked(w.snap, []*messages.Evaluation{b}, &CSIChanged{Plugins: []string{"hostpath"}}))
}
