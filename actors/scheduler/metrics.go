package scheduler

import (
	"sync/atomic"
	"time"

	metrics "github.com/hashicorp/go-metrics"
)

// The scheduler actor is troupe's evaluation broker and its workers, so
// it keeps Nomad's broker gauges (Stats, read by the agent's collector)
// and times its work with Nomad's worker metrics. Each costs a few
// atomic stores per message, or one sample per plan: nothing per
// allocation.

// Nomad's worker timers: how long the scheduler ran on one evaluation
// (nomad.nomad.worker.invoke_scheduler.<type>), how long submitting its
// plan took, from proposal to answer (nomad.nomad.worker.submit_plan),
// and committing an evaluation it failed or retries
// (nomad.nomad.worker.update_eval).
var (
	keyInvoke     = map[string][]string{}
	keySubmit     = []string{"nomad", "worker", "submit_plan"}
	keyUpdateEval = []string{"nomad", "worker", "update_eval"}
)

func init() {
	for _, t := range []string{"service", "batch", "system", "sysbatch", "_core"} {
		keyInvoke[t] = []string{"nomad", "worker", "invoke_scheduler", t}
	}
}

// measureInvoke records one run of the scheduler on an evaluation of
// type typ (an unknown type is not recorded: its evaluation fails).
func measureInvoke(typ string, start time.Time) {
	if k, ok := keyInvoke[typ]; ok {
		metrics.MeasureSince(k, start)
	}
}

// Stats is what the scheduler actor reports of its queue, in Nomad's
// broker terms; safe to read from any goroutine. The agent keeps one
// across leaderships: a scheduler that stops zeroes it.
type Stats struct {
	ready, pending, unacked, waiting atomic.Int64
}

// BrokerStats is one reading of Stats.
type BrokerStats struct {
	// Ready is evaluations queued that may be planned now
	// (nomad.nomad.broker.total_ready).
	Ready int64
	// Pending is evaluations queued behind a plan in flight for the same
	// job (nomad.nomad.broker.total_pending).
	Pending int64
	// Unacked is evaluations whose plan is on its way through raft
	// (nomad.nomad.broker.total_unacked; also the plan queue's depth,
	// nomad.nomad.plan.queue_depth).
	Unacked int64
	// Waiting is evaluations delayed in the broker: until their
	// WaitUntil, a refused plan's backoff or a failed commit's retry
	// (nomad.nomad.broker.total_waiting; waiting.go).
	Waiting int64
}

// Load reads s (nil: zeroes).
func (s *Stats) Load() BrokerStats {
	if s == nil {
		return BrokerStats{}
	}
	return BrokerStats{Ready: s.ready.Load(), Pending: s.pending.Load(), Unacked: s.unacked.Load(), Waiting: s.waiting.Load()}
}

func (s *Stats) store(b BrokerStats) {
	if s != nil {
		s.ready.Store(b.Ready)
		s.pending.Store(b.Pending)
		s.unacked.Store(b.Unacked)
		s.waiting.Store(b.Waiting)
	}
}

// brokerStats counts the queue: the evaluations of jobs with a plan in
// flight wait (pipeline.go), the rest are ready. It costs one map read
// per plan in flight.
func (a *Actor) brokerStats() BrokerStats {
	var pending int64
	for job := range a.flight.jobs {
		pending += int64(a.perJob[job])
	}
	return BrokerStats{Ready: int64(len(a.queue)) - pending, Pending: pending, Unacked: int64(len(a.flight.jobs)),
		Waiting: int64(len(a.timers))}
}

// queueAdd and queueDrop keep the per-job count of queued evaluations
// that brokerStats reads; job is evalJob of the evaluation.
func (a *Actor) queueAdd(id, job string) {
	a.queued[id] = job
	a.perJob[job]++
}

func (a *Actor) queueDrop(id string) {
	job, ok := a.queued[id]
	if !ok {
		return
	}
	delete(a.queued, id)
	if a.perJob[job]--; a.perJob[job] <= 0 {
		delete(a.perJob, job)
	}
}
