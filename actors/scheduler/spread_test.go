package scheduler

import (
	"fmt"
	"testing"

	"github.com/stretchr/testify/require"
	"github.com/troupe-dev/troupe/messages"
)

// rackNode is a test node in rack (no meta.rack when rack is "").
func rackNode(id, rack string) *messages.Node {
	n := testNode(id, 4000, 8192)
	if rack != "" {
		n.Meta["rack"] = rack
	}
	return n
}

func targets(kv ...any) []*messages.SpreadTarget {
	var out []*messages.SpreadTarget
	for i := 0; i < len(kv); i += 2 {
		out = append(out, &messages.SpreadTarget{Value: kv[i].(string), Percent: int32(kv[i+1].(int))})
	}
	return out
}

func TestSpreadBoost(t *testing.T) {
	rackSpread := func(ts []*messages.SpreadTarget) *messages.Spread {
		return &messages.Spread{Attribute: "${meta.rack}", Weight: 50, SpreadTarget: ts}
	}
	cases := []struct {
		name   string
		spread *messages.Spread
		count  int32
		placed []string           // racks of the allocations counted ("" none)
		want   map[string]float64 // rack of the node scored ("" none) -> boost
	}{
		{"even, nothing placed yet", rackSpread(nil), 6, nil,
			map[string]float64{"r1": 0, "": 0}},
		{"even and level: any placement unbalances, a new value does not", rackSpread(nil), 6,
			[]string{"r1", "r1", "r2", "r2"}, map[string]float64{"r1": -1, "r2": -1, "r3": 1, "": 1}},
		{"even: the least used is boosted, the most used penalised", rackSpread(nil), 6,
			[]string{"r1", "r1", "r2", "r2", "r2"}, map[string]float64{"r1": 0.5, "r2": -0.5, "r3": 1}},
		{"even: a missing attribute is a value of its own", rackSpread(nil), 6,
			[]string{"", "", "r1"}, map[string]float64{"": -1, "r1": 1, "r2": 1}},
		{"targets: below, at and past the desired count", rackSpread(targets("r1", 50, "r2", 25)), 8,
			[]string{"r1", "r2", "r2"}, map[string]float64{"r1": 0.5, "r2": -0.5}},
		{"targets: untargeted values share the implicit remainder", rackSpread(targets("r1", 50, "r2", 25)), 8,
			[]string{"r3"}, map[string]float64{"r3": 0, "r4": 0, "": 0}},
		{"targets: the implicit target when nothing is there", rackSpread(targets("r1", 50, "r2", 25)), 8,
			nil, map[string]float64{"r3": 0.5, "": 0.5}},
		{"targets summing to 100: other values are not wanted", rackSpread(targets("r1", 60, "r2", 40)), 10,
			nil, map[string]float64{"r1": 1 - 1.0/6, "r2": 0.75, "r3": -1, "": -1}},
		{"a 0% target is not wanted", rackSpread(targets("r1", 0, "r2", 100)), 4,
			nil, map[string]float64{"r1": -1, "r2": 0.75}},
		{"far past the target stops at -1", rackSpread(targets("r1", 10, "r2", 90)), 10,
			[]string{"r1", "r1", "r1", "r1"}, map[string]float64{"r1": -1}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			tg := &messages.TaskGroup{Name: "g", Count: tc.count, Spreads: []*messages.Spread{tc.spread}}
			var pool []*messages.Node
			for rack := range tc.want {
				pool = append(pool, rackNode("n-"+rack, rack))
			}
			set := newSpreadSet(&messages.Job{}, tg, len(pool))
			for i, rack := range tc.placed {
				set.account(pool, -1, rackNode(fmt.Sprint("p", i), rack), 1)
			}
			for i, n := range pool {
				require.InDelta(t, tc.want[n.Meta["rack"]], set.score(pool, i), 1e-9, "rack %q", n.Meta["rack"])
			}
		})
	}
}

func TestSpreadWeightsShareTheScore(t *testing.T) {
	job := &messages.Job{Spreads: []*messages.Spread{{Attribute: "${meta.zone}", Weight: 10,
		SpreadTarget: targets("z1", 100)}}}
	tg := &messages.TaskGroup{Name: "g", Count: 4, Spreads: []*messages.Spread{{Attribute: "${meta.rack}", Weight: 30,
		SpreadTarget: targets("r1", 100)}}}
	n := rackNode("n", "r2")
	n.Meta["zone"] = "z1"
	pool := []*messages.Node{n}
	set := newSpreadSet(job, tg, 1)
	require.Len(t, set.rules, 2)
	// rack r2 is not wanted (-1 at 30/40), zone z1 wants 4 (0.75 at 10/40).
	require.InDelta(t, -0.75+0.75*0.25, set.score(pool, 0), 1e-9)
	set.account(pool, 0, nil, 1)
	require.InDelta(t, -0.75+0.5*0.25, set.score(pool, 0), 1e-9, "a placement changes the score")
	set.account(pool, 0, nil, -1)
	require.InDelta(t, -0.75+0.75*0.25, set.score(pool, 0), 1e-9, "and a stop changes it back")
	require.Nil(t, newSpreadSet(&messages.Job{}, &messages.TaskGroup{}, 1))
}

// perRack counts a plan's placements by the rack of their node.
func perRack(plan *messages.ApplyPlan, nodes []*messages.Node) map[string]int {
	rack := map[string]string{}
	for _, n := range nodes {
		rack[n.ID] = n.Meta["rack"]
	}
	out := map[string]int{}
	for _, a := range plan.Place {
		out[rack[a.NodeID]]++
	}
	return out
}

// racks makes per nodes for each rack named ("": without meta.rack; a
// rack named twice gets twice the nodes), numbered per rack from 0.
func racks(per int, names ...string) []*messages.Node {
	var nodes []*messages.Node
	next := map[string]int{}
	for _, r := range names {
		for range per {
			nodes = append(nodes, rackNode(fmt.Sprintf("%s-%d", r, next[r]), r))
			next[r]++
		}
	}
	return nodes
}

func TestSpreadPlacesAcrossValues(t *testing.T) {
	cases := []struct {
		name     string
		count    int32
		nodes    []*messages.Node
		job      []*messages.Spread
		group    []*messages.Spread
		existing []string // racks that already run one allocation
		want     map[string]int
	}{
		{"even over the racks", 9, racks(2, "r1", "r1", "r1", "r2", "r3"), nil,
			[]*messages.Spread{{Attribute: "${meta.rack}", Weight: 100}}, nil,
			map[string]int{"r1": 3, "r2": 3, "r3": 3}},
		{"even, job level", 6, racks(4, "r1", "r2"),
			[]*messages.Spread{{Attribute: "${meta.rack}", Weight: 100}}, nil, nil,
			map[string]int{"r1": 3, "r2": 3}},
		{"even, counting what already runs", 4, racks(3, "r1", "r1", "r2", "r3"), nil,
			[]*messages.Spread{{Attribute: "${meta.rack}", Weight: 100}}, []string{"r1", "r1"},
			map[string]int{"r2": 2, "r3": 2}},
		{"targets", 10, racks(5, "r1", "r2"), nil,
			[]*messages.Spread{{Attribute: "${meta.rack}", Weight: 100, SpreadTarget: targets("r1", 70, "r2", 30)}}, nil,
			map[string]int{"r1": 7, "r2": 3}},
		{"targets with an implicit remainder", 10, racks(4, "r1", "r2", "r3"), nil,
			[]*messages.Spread{{Attribute: "${meta.rack}", Weight: 100, SpreadTarget: targets("r1", 80)}}, nil,
			map[string]int{"r1": 8, "r2": 1, "r3": 1}},
		{"a missing attribute counts as its own value", 6, racks(3, "r1", "r1", "r2", ""), nil,
			[]*messages.Spread{{Attribute: "${meta.rack}", Weight: 100}}, nil,
			map[string]int{"r1": 2, "r2": 2, "": 2}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			job := testJob("web", jobTypeService, tc.count)
			job.Spreads, job.TaskGroups[0].Spreads = tc.job, tc.group
			s := newMemSnapshot(tc.nodes, job)
			for i, rack := range tc.existing {
				s.AddAlloc(testAlloc(job, rack+"-"+fmt.Sprint(i), uint32(100+i)))
			}
			job.TaskGroups[0].Count += int32(len(tc.existing))
			plan := mustProcess(t, s, testEval(job), 7)
			require.Equal(t, tc.want, perRack(plan, tc.nodes))
			scored := 0
			for _, a := range plan.Place {
				require.NotEmpty(t, a.Metrics.ScoreMetaData)
				if _, ok := a.Metrics.ScoreMetaData[0].ScoreMap()[ScoreSpread]; ok {
					scored++
				}
			}
			require.NotZero(t, scored, "the spread scored the chosen nodes")
		})
	}
}

func TestSeveralSpreadsCombine(t *testing.T) {
	var nodes []*messages.Node
	for _, zone := range []string{"z1", "z2"} {
		for _, rack := range []string{"r1", "r2"} {
			for i := range 3 {
				n := rackNode(fmt.Sprintf("%s-%s-%d", zone, rack, i), zone+rack)
				n.Meta["zone"] = zone
				nodes = append(nodes, n)
			}
		}
	}
	job := testJob("web", jobTypeService, 8)
	job.Spreads = []*messages.Spread{{Attribute: "${meta.zone}", Weight: 50}}
	job.TaskGroups[0].Spreads = []*messages.Spread{{Attribute: "${meta.rack}", Weight: 50}}
	plan := mustProcess(t, newMemSnapshot(nodes, job), testEval(job), 3)
	require.Equal(t, map[string]int{"z1r1": 2, "z1r2": 2, "z2r1": 2, "z2r2": 2}, perRack(plan, nodes))
}

func TestSpreadRanksMoreCandidates(t *testing.T) {
	job := testJob("web", jobTypeService, 3)
	plain := mustProcess(t, newMemSnapshot(SimulatedNodes(1000, 1), job), testEval(job), 1)
	require.Equal(t, int32(logLimit(1000)), plain.Place[0].Metrics.NodesEvaluated)
	job.TaskGroups[0].Spreads = []*messages.Spread{{Attribute: "${node.datacenter}", Weight: 50}}
	spread := mustProcess(t, newMemSnapshot(SimulatedNodes(1000, 1), job), testEval(job), 1)
	require.Equal(t, int32(minScoredLimit), spread.Place[0].Metrics.NodesEvaluated)
	require.Equal(t, 1500, scoredLimit(&messages.TaskGroup{Count: 1500}, 14), "at least the count")
}

// TestSystemJobsIgnoreSpreadsAndAffinities: as in Nomad, a system job runs
// on every feasible node whatever its spreads and affinities; each
// allocation's ScoreMetaData is its own node's fit.
func TestSystemJobsIgnoreSpreadsAndAffinities(t *testing.T) {
	job := testJob("sys", jobTypeSystem, 1)
	job.Spreads = []*messages.Spread{{Attribute: "${meta.rack}", Weight: 100, SpreadTarget: targets("r1", 100)}}
	job.Affinities = []*messages.Affinity{{LTarget: "${meta.rack}", Operand: "=", RTarget: "r1", Weight: -100}}
	nodes := racks(1, "r1", "r1", "r2")
	plan := processWith(t, newMemSnapshot(nodes, job), testEval(job), scoredOpts())
	require.Len(t, plan.Place, 3)
	for _, a := range plan.Place {
		meta := a.Metrics.ScoreMetaData
		require.Len(t, meta, 1)
		require.Equal(t, a.NodeID, meta[0].NodeID)
		require.NotContains(t, meta[0].ScoreMap(), ScoreSpread)
		require.InDelta(t, meta[0].ScoreMap()[ScoreBinPack], meta[0].NormScore, 1e-9)
	}
}
