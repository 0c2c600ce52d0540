package messages

import "encoding/json"

// ScoreMap is m's scores by scorer: Scores and the ScoreNames/ScoreValues
// pairs together (nil when there are none).
func (m *NodeScoreMeta) ScoreMap() map[string]float64 {
	names, values := m.GetScoreNames(), m.GetScoreValues()
	if len(names) == 0 {
		return m.GetScores()
	}
	out := make(map[string]float64, len(m.GetScores())+len(names))
	for k, v := range m.GetScores() {
		out[k] = v
	}
	for i, name := range names {
		if i < len(values) {
			out[name] = values[i]
		}
	}
	return out
}

// MarshalJSON writes m in Nomad's shape, {"NodeID", "Scores", "NormScore"},
// with every score in Scores.
func (m *NodeScoreMeta) MarshalJSON() ([]byte, error) {
	return json.Marshal(struct {
		NodeID    string
		Scores    map[string]float64
		NormScore float64
	}{m.GetNodeID(), m.ScoreMap(), m.GetNormScore()})
}
