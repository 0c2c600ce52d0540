package scheduler

import (
	"testing"

	"github.com/stretchr/testify/require"
	"github.com/troupe-dev/troupe/messages"
)

// affinityNodes are three equal nodes that differ in their rack, tags
// and OS version.
func affinityNodes() []*messages.Node {
	nodes := testNodes(3)
	for i, v := range [][3]string{{"r1", "ssd,gpu", "20.04"}, {"r2", "ssd", "22.04"}, {"r3", "hdd", "24.04"}} {
		nodes[i].Meta["rack"], nodes[i].Meta["tags"], nodes[i].Attributes["os.version"] = v[0], v[1], v[2]
	}
	return nodes
}

func TestAffinityScore(t *testing.T) {
	aff := func(l, op, r string, w int32) *messages.Affinity {
		return &messages.Affinity{LTarget: l, Operand: op, RTarget: r, Weight: w}
	}
	cases := []struct {
		name string
		affs []*messages.Affinity
		want [3]float64 // per affinityNodes node
	}{
		{"=", []*messages.Affinity{aff("${meta.rack}", "=", "r2", 50)}, [3]float64{0, 1, 0}},
		{"empty operator means =", []*messages.Affinity{aff("${meta.rack}", "", "r2", 50)}, [3]float64{0, 1, 0}},
		{"!=", []*messages.Affinity{aff("${meta.rack}", "!=", "r2", 50)}, [3]float64{1, 0, 1}},
		{"negative weight", []*messages.Affinity{aff("${meta.rack}", "=", "r1", -80)}, [3]float64{-1, 0, 0}},
		{"regexp", []*messages.Affinity{aff("${meta.rack}", "regexp", "r[13]", 20)}, [3]float64{1, 0, 1}},
		{"set_contains", []*messages.Affinity{aff("${meta.tags}", "set_contains", "ssd", 20)}, [3]float64{1, 1, 0}},
		{"set_contains_any", []*messages.Affinity{aff("${meta.tags}", "set_contains_any", "gpu,hdd", 20)}, [3]float64{1, 0, 1}},
		{"version", []*messages.Affinity{aff("${attr.os.version}", "version", ">= 22.04", 20)}, [3]float64{0, 1, 1}},
		{"a missing attribute meets nothing", []*messages.Affinity{aff("${meta.nope}", "=", "x", 20)}, [3]float64{0, 0, 0}},
		{"weights over the sum of |weights|", []*messages.Affinity{
			aff("${meta.rack}", "=", "r1", 75), aff("${meta.tags}", "set_contains", "ssd", -25)},
			[3]float64{0.5, -0.25, 0}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			tg := &messages.TaskGroup{Affinities: tc.affs}
			pool := affinityNodes()
			set := newAffinitySet(&messages.Job{}, tg, len(pool))
			m := newMatcher()
			for i := range pool {
				require.InDelta(t, tc.want[i], set.score(m, pool, i), 1e-9, "node %d", i)
				require.InDelta(t, tc.want[i], set.score(m, pool, i), 1e-9, "node %d, remembered", i)
			}
		})
	}
	require.Nil(t, newAffinitySet(&messages.Job{}, &messages.TaskGroup{}, 3))
}

func TestAffinityPlacesAtEachLevel(t *testing.T) {
	cases := []struct {
		name  string
		set   func(job *messages.Job, aff []*messages.Affinity)
		aff   []*messages.Affinity
		wantN int // index in affinityNodes of the chosen node
	}{
		{"job", func(j *messages.Job, a []*messages.Affinity) { j.Affinities = a },
			[]*messages.Affinity{{LTarget: "${meta.rack}", Operand: "=", RTarget: "r3", Weight: 100}}, 2},
		{"group", func(j *messages.Job, a []*messages.Affinity) { j.TaskGroups[0].Affinities = a },
			[]*messages.Affinity{{LTarget: "${meta.rack}", Operand: "=", RTarget: "r2", Weight: 100}}, 1},
		{"task", func(j *messages.Job, a []*messages.Affinity) { j.TaskGroups[0].Tasks[0].Affinities = a },
			[]*messages.Affinity{{LTarget: "${attr.os.version}", Operand: "version", RTarget: "< 22", Weight: 60}}, 0},
		{"negative weights avoid", func(j *messages.Job, a []*messages.Affinity) { j.TaskGroups[0].Affinities = a },
			[]*messages.Affinity{{LTarget: "${meta.rack}", Operand: "!=", RTarget: "r1", Weight: -100}}, 0},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			nodes := affinityNodes()
			for seed := range uint64(5) {
				job := testJob("web", jobTypeService, 1)
				tc.set(job, tc.aff)
				plan := mustProcess(t, newMemSnapshot(nodes, job), testEval(job), seed)
				require.Equal(t, nodes[tc.wantN].ID, plan.Place[0].NodeID, "seed %d", seed)
				meta := plan.Place[0].Metrics.ScoreMetaData
				require.Len(t, meta, 3, "every node ranked")
				require.Equal(t, nodes[tc.wantN].ID, meta[0].NodeID)
				require.NotZero(t, meta[0].ScoreMap()[ScoreNodeAffinity]+meta[1].ScoreMap()[ScoreNodeAffinity]+
					meta[2].ScoreMap()[ScoreNodeAffinity])
			}
		})
	}
}
