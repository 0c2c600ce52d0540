package messages

import (
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/require"
)

func TestNodeScoreMetaInNomadsShape(t *testing.T) {
	cases := []struct {
		name string
		meta *NodeScoreMeta
		want map[string]float64
	}{
		{"map", &NodeScoreMeta{NodeID: "n1", Scores: map[string]float64{"binpack": 0.5}, NormScore: 0.5},
			map[string]float64{"binpack": 0.5}},
		{"pairs", &NodeScoreMeta{NodeID: "n1", ScoreNames: []string{"binpack", "allocation-spread"},
			ScoreValues: []float64{0.5, -0.25}, NormScore: 0.125},
			map[string]float64{"binpack": 0.5, "allocation-spread": -0.25}},
		{"both", &NodeScoreMeta{NodeID: "n1", Scores: map[string]float64{"devices": 1},
			ScoreNames: []string{"binpack"}, ScoreValues: []float64{0.5}, NormScore: 0.75},
			map[string]float64{"binpack": 0.5, "devices": 1}},
		{"a name without a value is left out", &NodeScoreMeta{NodeID: "n1", ScoreNames: []string{"binpack", "x"},
			ScoreValues: []float64{0.5}}, map[string]float64{"binpack": 0.5}},
		{"none", &NodeScoreMeta{NodeID: "n1"}, nil},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			require.Equal(t, tc.want, tc.meta.ScoreMap())
			b, err := json.Marshal([]*NodeScoreMeta{tc.meta})
			require.NoError(t, err)
			var back []map[string]json.RawMessage
			require.NoError(t, json.Unmarshal(b, &back))
			require.ElementsMatch(t, []string{"NodeID", "Scores", "NormScore"}, keys(back[0]))
			var read []*NodeScoreMeta
			require.NoError(t, json.Unmarshal(b, &read))
			require.Equal(t, tc.meta.GetNodeID(), read[0].GetNodeID())
			require.Equal(t, tc.meta.GetNormScore(), read[0].GetNormScore())
			require.Equal(t, tc.want, read[0].ScoreMap(), "read back, every score is in Scores")
		})
	}
}

func keys(m map[string]json.RawMessage) []string {
	var out []string
	for k := range m {
		out = append(out, k)
	}
	return out
}
