package clientsim

import (
	"context"
	"time"

	"github.com/troupe-dev/troupe/api"
	"github.com/troupe-dev/troupe/messages"
)

// DetectSlack is how late past its deadline (last answered heartbeat +
// TTL + grace) a node may be marked down and still count as detected in
// time: the leader's timer, the raft commit and a loaded machine.
const DetectSlack = time.Second

// Detect is what happened after the nodes stopped. Durations are from
// the stop.
type Detect struct {
	// AllDown is when every stopped node was seen down in the state with
	// its node-update evaluation (seen by polling, so up to one Poll late).
	AllDown time.Duration
	// FirstEval and LastEval are the creation times (the leader's clock)
	// of the first and last node-update evaluation of the stopped nodes,
	// or of the poll that saw the node down when it held no allocation.
	FirstEval, LastEval time.Duration
	// Evaluated is when every one of those evaluations was done (complete,
	// blocked, failed or cancelled); 0 if that was not seen in time.
	Evaluated time.Duration
	// Bound is the latest deadline of the stopped nodes: their last
	// answered heartbeat plus its TTL plus the grace.
	Bound time.Duration
	// InTime counts the nodes marked down by their deadline plus
	// DetectSlack; Late is the most any was past its deadline (negative:
	// all were early).
	InTime int
	Late   time.Duration

	down  map[string]time.Duration
	evals map[string]*messages.Evaluation
}

// watchDown polls the state until every stopped node is down and every
// one that held an allocation has its node-update evaluation, then waits
// (bounded) for those evaluations to be done.
func watchDown(ctx context.Context, c *api.Client, sim *Sim, ids []string, stopAt time.Time, sc Scenario, limit time.Duration) (Detect, error) {
	d := Detect{down: map[string]time.Duration{}, evals: map[string]*messages.Evaluation{}}
	wantEval := map[string]bool{}
	for _, id := range ids {
		if in, _ := sim.Node(id); in.Allocs > 0 {
			wantEval[id] = true
		}
	}
	err := poll(ctx, sc.Poll, limit, "the stopped clients down with their evaluations", func() (bool, error) {
		for _, id := range ids {
			if _, ok := d.down[id]; ok {
				continue
			}
			n, _, err := c.Nodes().Info(id, nil)
			if err != nil {
				return false, err
			}
			if n.GetStatus() == "down" {
				d.down[id] = time.Since(stopAt)
			}
		}
		if len(wantEval) > 0 {
			if err := d.readEvals(c, sc.JobID, wantEval, stopAt); err != nil {
				return false, err
			}
		}
		return len(d.down) == len(ids) && len(d.evals) == len(wantEval), nil
	})
	if err != nil {
		return d, err
	}
	d.AllDown = time.Since(stopAt)
	if len(wantEval) == 0 {
		return d, nil
	}
	// The evaluations' outcome is reported, not required.
	_ = poll(ctx, sc.Poll, sc.Timeout, "the stopped clients' evaluations done", func() (bool, error) {
		if err := d.readEvals(c, sc.JobID, wantEval, stopAt); err != nil {
			return false, err
		}
		for _, e := range d.evals {
			if !evalDone(e.GetStatus()) {
				return false, nil
			}
		}
		d.Evaluated = time.Since(stopAt)
		return true, nil
	})
	return d, nil
}

// readEvals keeps, per stopped node, the newest node-update evaluation of
// the job created since the stop.
func (d *Detect) readEvals(c *api.Client, jobID string, want map[string]bool, stopAt time.Time) error {
	evals, _, err := c.Jobs().Evaluations(jobID, nil)
	if err != nil {
		return err
	}
	for _, e := range evals {
		if e.GetTriggeredBy() != "node-update" || !want[e.GetNodeID()] || e.GetCreateTime() < stopAt.UnixNano() {
			continue
		}
		if old := d.evals[e.GetNodeID()]; old == nil || e.GetCreateIndex() >= old.GetCreateIndex() {
			d.evals[e.GetNodeID()] = e
		}
	}
	return nil
}

func evalDone(status string) bool {
	switch status {
	case "complete", "blocked", "failed", "canceled":
		return true
	}
	return false
}

// judge compares when each node was marked down with its deadline.
func (d *Detect) judge(sim *Sim, ids []string, stopAt time.Time, grace time.Duration) {
	for i, id := range ids {
		in, _ := sim.Node(id)
		deadline := in.LastReply.Add(in.TTL + grace).Sub(stopAt)
		at := d.down[id]
		if e := d.evals[id]; e != nil {
			at = time.Duration(e.GetCreateTime() - stopAt.UnixNano())
		}
		late := at - deadline
		if i == 0 {
			d.FirstEval, d.LastEval, d.Late = at, at, late
		}
		d.FirstEval, d.LastEval = min(d.FirstEval, at), max(d.LastEval, at)
		d.Bound, d.Late = max(d.Bound, deadline), max(d.Late, late)
		if late <= DetectSlack {
			d.InTime++
		}
	}
}
