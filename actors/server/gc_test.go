package server

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/troupe-dev/troupe/cluster/state"
	"github.com/troupe-dev/troupe/messages"
)

// fakeGCState answers the rules from sets of collectable IDs.
type fakeGCState struct {
	jobs    []*messages.Job
	evals   []*messages.Evaluation
	nodes   []*messages.Node
	plugins []*messages.CSIPlugin
	ok      map[string]bool
	// versions counts the stored versions of each job, by ID.
	versions map[string]int
}

func (f *fakeGCState) JobVersions(_, id string) []*messages.Job {
	return make([]*messages.Job, f.versions[id])
}

func (f *fakeGCState) Jobs() []*messages.Job             { return f.jobs }
func (f *fakeGCState) Evals() []*messages.Evaluation     { return f.evals }
func (f *fakeGCState) Nodes() []*messages.Node           { return f.nodes }
func (f *fakeGCState) CSIPlugins() []*messages.CSIPlugin { return f.plugins }
func (f *fakeGCState) JobCollectable(j *messages.Job, _ state.GCCutoffs) bool {
	return f.ok["job:"+j.ID]
}
func (f *fakeGCState) EvalCollectable(e *messages.Evaluation, _ state.GCCutoffs) bool {
	return f.ok["eval:"+e.ID]
}
func (f *fakeGCState) NodeCollectable(n *messages.Node, _ state.GCCutoffs) bool {
	return f.ok["node:"+n.ID]
}
func (f *fakeGCState) PluginCollectable(p *messages.CSIPlugin) bool { return f.ok["plugin:"+p.ID] }

func TestDecideGC(t *testing.T) {
	s := &fakeGCState{
		jobs:    []*messages.Job{{Namespace: "default", ID: "dead"}, {Namespace: "default", ID: "live"}},
		evals:   []*messages.Evaluation{{ID: "e-dead", Namespace: "default", JobID: "dead"}, {ID: "e-old", JobID: "live", Namespace: "default"}, {ID: "e-open", JobID: "live", Namespace: "default"}},
		nodes:   []*messages.Node{{ID: "down"}, {ID: "ready"}},
		plugins: []*messages.CSIPlugin{{ID: "unused"}, {ID: "used"}},
		ok: map[string]bool{"job:dead": true, "eval:e-dead": true, "eval:e-old": true,
			"node:down": true, "plugin:unused": true},
	}
	cut := state.GCCutoffs{Eval: 1, Job: 2, Node: 3}
	got := DecideGC(s, cut, 6)
	require.Len(t, got, 1)
	g := got[0]
	require.Equal(t, []*messages.GCJob{{Namespace: "default", ID: "dead"}}, g.Jobs)
	require.Equal(t, []string{"e-old"}, g.EvalIDs, "a collected job's evals go with it; open ones stay")
	require.Equal(t, []string{"down"}, g.NodeIDs)
	require.Equal(t, []string{"unused"}, g.PluginIDs)
	require.Equal(t, []int64{1, 2, 3}, []int64{g.EvalCutoff, g.JobCutoff, g.NodeCutoff})

	require.Empty(t, DecideGC(&fakeGCState{}, cut, 6))
}

// TestDecideGCTrimsVersions: a job that stays but keeps more versions
// than the limit (lowered since it was registered) is trimmed to it; a
// collected job is not trimmed, it goes whole; one within the limit is
// left alone.
func TestDecideGCTrimsVersions(t *testing.T) {
	s := &fakeGCState{
		jobs: []*messages.Job{{Namespace: "default", ID: "dead"}, {Namespace: "default", ID: "many"},
			{Namespace: "default", ID: "few"}},
		ok:       map[string]bool{"job:dead": true},
		versions: map[string]int{"dead": 9, "many": 4, "few": 3},
	}
	got := DecideGC(s, state.GCCutoffs{}, 3)
	require.Len(t, got, 1)
	require.Equal(t, []*messages.GCJob{{Namespace: "default", ID: "many"}}, got[0].TrimJobs)
	require.Equal(t, uint32(3), got[0].KeepVersions)
	require.Equal(t, []*messages.GCJob{{Namespace: "default", ID: "dead"}}, got[0].Jobs)
	require.Empty(t, DecideGC(s, state.GCCutoffs{}, 6)[0].TrimJobs, "within the default limit")
	require.Equal(t, uint32(1), DecideGC(s, state.GCCutoffs{}, 0)[0].KeepVersions, "at least the current version stays")
}

func TestDecideGCBatches(t *testing.T) {
	s := &fakeGCState{ok: map[string]bool{}}
	for i := range state.MaxGCItems + 3 {
		id := string(rune('a'+i%26)) + time.Duration(i).String()
		s.evals = append(s.evals, &messages.Evaluation{ID: id})
		s.ok["eval:"+id] = true
	}
	got := DecideGC(s, state.GCCutoffs{}, 6)
	require.Len(t, got, 2)
	require.Len(t, got[0].EvalIDs, state.MaxGCItems)
	require.Len(t, got[1].EvalIDs, 3)
}

func TestGCConfigCutoffs(t *testing.T) {
	now := time.Unix(100000, 0)
	c := GCConfig{}.Cutoffs(now, false)
	require.Equal(t, now.Add(-time.Hour).UnixNano(), c.Eval)
	require.Equal(t, now.Add(-4*time.Hour).UnixNano(), c.Job)
	require.Equal(t, now.Add(-24*time.Hour).UnixNano(), c.Node)
	f := GCConfig{}.Cutoffs(now, true)
	require.Equal(t, state.GCCutoffs{Eval: now.UnixNano(), Job: now.UnixNano(), Node: now.UnixNano()}, f)
}
