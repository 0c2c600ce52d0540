package scheduler

import (
	"testing"

	"github.com/stretchr/testify/require"
	"github.com/troupe-dev/troupe/messages"
)

func TestNodeScoresNormalise(t *testing.T) {
	type part struct {
		s scorer
		v float64
	}
	cases := []struct {
		name  string
		parts []part
		norm  float64
		meta  map[string]float64
	}{
		{"bin-packing alone", []part{{scBinPack, 0.6}}, 0.6, map[string]float64{ScoreBinPack: 0.6}},
		{"a scorer that does not apply is not a 0 in the mean", []part{{scBinPack, 0.6}, {scAffinity, 1}},
			0.8, map[string]float64{ScoreBinPack: 0.6, ScoreNodeAffinity: 1}},
		{"every scorer", []part{{scBinPack, 0.4}, {scAntiAffinity, -0.5}, {scPenalty, -1}, {scAffinity, 0.5},
			{scSpread, 0.6}, {scDevices, 1}}, 1.0 / 6, map[string]float64{ScoreBinPack: 0.4, scoreJobAntiAffinity: -0.5,
			scoreReschedulePenalty: -1, ScoreNodeAffinity: 0.5, ScoreSpread: 0.6, scoreDevices: 1}},
		{"nothing", nil, 0, nil},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			var s nodeScores
			for _, p := range tc.parts {
				s.add(p.s, p.v)
			}
			require.InDelta(t, tc.norm, s.norm(), 1e-9)
			top := topScores{}
			top.offer(0, s.norm(), &s)
			m := top.meta(testNodes(1))[0]
			require.InDeltaMapValues(t, tc.meta, m.ScoreMap(), 1e-9)
			require.Len(t, m.ScoreMap(), len(tc.meta))
			require.InDelta(t, tc.norm, m.NormScore, 1e-9)
		})
	}
}

func TestTopScoresKeepsTheBestFive(t *testing.T) {
	var top topScores
	pool := testNodes(8)
	for i, v := range []float64{0.3, 0.9, 0.1, 0.5, 0.9, 0.7, 0.2, 0.4} {
		var s nodeScores
		s.add(scBinPack, v)
		top.offer(i, v, &s)
	}
	meta := top.meta(pool)
	var ids []string
	for _, m := range meta {
		ids = append(ids, m.NodeID)
	}
	require.Equal(t, []string{"n01", "n04", "n05", "n03", "n07"}, ids, "best first, ties in the order ranked")
	top.reset()
	require.Nil(t, top.meta(pool))
}

func TestSchedulerAlgorithm(t *testing.T) {
	cases := []struct {
		algorithm string
		want      string
	}{
		{"", "busy"},
		{algorithmBinPack, "busy"},
		{algorithmSpread, "empty"},
		{"unknown", "busy"},
	}
	for _, tc := range cases {
		t.Run(tc.algorithm, func(t *testing.T) {
			job := testJob("web", jobTypeService, 1)
			s := newMemSnapshot([]*messages.Node{testNode("empty", 4000, 8192), testNode("busy", 4000, 8192)}, job)
			s.AddAlloc(otherJobAlloc("busy", 2000, 4096))
			opts := testOpts(1)
			opts.SchedulerAlgorithm, opts.ScoreMetaData = tc.algorithm, true
			plan := processWith(t, s, testEval(job), opts)
			require.Equal(t, tc.want, plan.Place[0].NodeID)
			u := &nodeUsage{cap: resources{cpu: 4000, mem: 8192}}
			if tc.want == "busy" {
				u.used = resources{cpu: 2000, mem: 4096}
			}
			fit := binPackScore(u, resources{cpu: 500, mem: 256})
			if tc.algorithm == algorithmSpread {
				fit = spreadFitScore(u, resources{cpu: 500, mem: 256})
			}
			require.InDelta(t, fit, plan.Place[0].Metrics.ScoreMetaData[0].ScoreMap()[ScoreBinPack], 1e-9)
		})
	}
}

func TestSpreadFitScore(t *testing.T) {
	u := &nodeUsage{cap: resources{cpu: 1000, mem: 1000}}
	require.InDelta(t, 1.0, spreadFitScore(u, resources{}), 1e-9, "empty")
	require.InDelta(t, 0.0, spreadFitScore(u, resources{cpu: 1000, mem: 1000}), 1e-9, "full")
	half := spreadFitScore(u, resources{cpu: 500, mem: 500})
	require.InDelta(t, (2*3.1622776601683795-2)/18, half, 1e-9)
	require.InDelta(t, 1.0, half+binPackScore(u, resources{cpu: 500, mem: 500}), 1e-9, "the mirror of bin-packing")
}

// TestScoresCombine checks, through Process, that the chosen node has the
// best mean of the scores that apply to it, and that each allocation's
// ScoreMetaData says so.
func TestScoresCombine(t *testing.T) {
	cases := []struct {
		name  string
		setup func(job *messages.Job, s *MemSnapshot)
		want  string
	}{
		{"bin-packing alone: the fuller node", func(*messages.Job, *MemSnapshot) {}, "busy"},
		{"an affinity met outweighs the fit", func(job *messages.Job, _ *MemSnapshot) {
			job.Affinities = []*messages.Affinity{{LTarget: "${meta.rack}", Operand: "=", RTarget: "r2", Weight: 50}}
		}, "empty"},
		{"an affinity not met is left out of the mean", func(job *messages.Job, _ *MemSnapshot) {
			job.Affinities = []*messages.Affinity{{LTarget: "${meta.rack}", Operand: "=", RTarget: "r9", Weight: 50}}
		}, "busy"},
		{"a spread away from an unwanted rack", func(job *messages.Job, _ *MemSnapshot) {
			job.TaskGroups[0].Spreads = []*messages.Spread{{Attribute: "${meta.rack}", Weight: 100,
				SpreadTarget: targets("r1", 0, "r2", 100)}}
		}, "empty"},
		{"job anti-affinity", func(job *messages.Job, s *MemSnapshot) {
			job.TaskGroups[0].Count = 2
			s.AddAlloc(testAlloc(job, "busy", 1))
		}, "empty"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			job := testJob("web", jobTypeService, 1)
			nodes := []*messages.Node{rackNode("busy", "r1"), rackNode("empty", "r2")}
			s := newMemSnapshot(nodes, job)
			s.AddAlloc(otherJobAlloc("busy", 500, 1024)) // bin-packing 0.41 there, 0.18 on empty
			tc.setup(job, s)
			plan := processWith(t, s, testEval(job), scoredOpts())
			require.Len(t, plan.Place, 1)
			require.Equal(t, tc.want, plan.Place[0].NodeID)
			meta := plan.Place[0].Metrics.ScoreMetaData
			require.Len(t, meta, 2)
			require.Equal(t, tc.want, meta[0].NodeID)
			require.Greater(t, meta[0].NormScore, meta[1].NormScore)
			for _, m := range meta {
				sum, n := 0.0, 0
				for _, v := range m.ScoreMap() {
					if v != 0 {
						sum, n = sum+v, n+1
					}
				}
				require.InDelta(t, sum/float64(n), m.NormScore, 1e-9, "%s: the mean of %v", m.NodeID, m.ScoreMap())
			}
		})
	}
}

// TestScoreMetaDataKeptWhereItExplains: a plain bin-pack placement stores
// no scores (job plan asks for them), one with an affinity does.
func TestScoreMetaDataKeptWhereItExplains(t *testing.T) {
	plain := testJob("plain", jobTypeService, 1)
	plan := mustProcess(t, newMemSnapshot(testNodes(3), plain), testEval(plain), 1)
	require.Empty(t, plan.Place[0].Metrics.ScoreMetaData, "a plain bin-pack placement keeps no scores")

	plan = processWith(t, newMemSnapshot(testNodes(3), plain), testEval(plain), scoredOpts())
	require.NotEmpty(t, plan.Place[0].Metrics.ScoreMetaData, "unless asked, as job plan does")

	aff := testJob("aff", jobTypeService, 1)
	aff.Affinities = []*messages.Affinity{{LTarget: "${node.datacenter}", RTarget: "dc1", Operand: "=", Weight: 50}}
	plan = mustProcess(t, newMemSnapshot(testNodes(3), aff), testEval(aff), 1)
	require.NotEmpty(t, plan.Place[0].Metrics.ScoreMetaData, "an affinity chose the node: its scores are kept")
}

// scoredOpts are testOpts(1) that keep every placement's scores.
func scoredOpts() Options {
	opts := testOpts(1)
	opts.ScoreMetaData = true
	return opts
}
