package scheduler

import (
	"github.com/troupe-dev/troupe/messages"
)

// affinitySet is a task group's node affinities: the job's, the group's
// and its tasks', as in Nomad. A node's score is the sum of the weights
// of the affinities it meets over the sum of all |weights|, in [-1, 1].
// It depends on the node alone, so it is computed once per pool node.
type affinitySet struct {
	rules   []rule
	weights []float64
	total   float64   // sum of |weights|
	memo    []float64 // per pool node: score+2; 0 not computed yet
}

// newAffinitySet gathers the affinities that apply to tg; nil when none
// does.
func newAffinitySet(job *messages.Job, tg *messages.TaskGroup, poolSize int) *affinitySet {
	all := append(append([]*messages.Affinity(nil), job.GetAffinities()...), tg.GetAffinities()...)
	for _, t := range tg.GetTasks() {
		all = append(all, t.GetAffinities()...)
	}
	set := &affinitySet{}
	for _, a := range all {
		if a == nil || a.Weight == 0 {
			continue
		}
		op := a.Operand
		if op == "" {
			op = opEqual
		}
		set.rules = append(set.rules, rule{op: op, l: parseTarget(a.LTarget), r: parseTarget(a.RTarget)})
		w := float64(a.Weight)
		set.weights = append(set.weights, w)
		set.total += max(w, -w)
	}
	if len(set.rules) == 0 {
		return nil
	}
	set.memo = make([]float64, poolSize)
	return set
}

// score is pool node idx's affinity score.
func (s *affinitySet) score(m *matcher, pool []*messages.Node, idx int) float64 {
	if v := s.memo[idx]; v != 0 {
		return v - 2
	}
	v := s.nodeScore(m, pool[idx])
	s.memo[idx] = v + 2
	return v
}

func (s *affinitySet) nodeScore(m *matcher, n *messages.Node) float64 {
	met := 0.0
	for i := range s.rules {
		if m.checkRule(&s.rules[i], n) {
			met += s.weights[i]
		}
	}
	return met / s.total
}
