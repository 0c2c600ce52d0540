package api

import (
	"net/http"
	"time"

	"github.com/troupe-dev/troupe/jobdiff"
	"github.com/troupe-dev/troupe/messages"
)

// JobPlanRequest is the body of PUT /v1/job/:id/plan.
type JobPlanRequest struct {
	Job  *messages.Job
	Diff bool // answer with the difference to the stored job
}

// MarshalJSON writes {"Job": ..., "Diff": ...} with the job as
// jobspec.EncodeJSON writes it (zero counts and policies kept).
func (r *JobPlanRequest) MarshalJSON() ([]byte, error) {
	return wrapJob(r.Job, map[string]any{"Diff": r.Diff})
}

// JobPlanResponse answers a job plan: what registering the job would make
// the scheduler do, in Nomad's shape. Nothing was changed.
type JobPlanResponse struct {
	// JobModifyIndex is the stored job's (0: a new job), for
	// EnforceRegister (`job run -check-index`).
	JobModifyIndex uint64
	// CreatedEvals are the evaluations the real run would create (a
	// blocked one when placements fail).
	CreatedEvals   []*messages.Evaluation
	Diff           *jobdiff.JobDiff
	Annotations    *PlanAnnotations
	FailedTGAllocs map[string]*messages.AllocMetric
	// NextPeriodicLaunch is zero: troupe has no periodic jobs.
	NextPeriodicLaunch time.Time
	Warnings           string
}

// PlanAnnotations says what the plan does per task group.
type PlanAnnotations struct {
	DesiredTGUpdates map[string]*DesiredUpdates
	PreemptedAllocs  []*AllocListStub
}

// GetDesiredTGUpdates is a's per-group counts, nil for a nil a.
func (a *PlanAnnotations) GetDesiredTGUpdates() map[string]*DesiredUpdates {
	if a == nil {
		return nil
	}
	return a.DesiredTGUpdates
}

// DesiredUpdates counts what a plan does to one task group.
type DesiredUpdates struct {
	Ignore            uint64
	Place             uint64
	Migrate           uint64
	Stop              uint64
	InPlaceUpdate     uint64
	DestructiveUpdate uint64
	Canary            uint64
	Preemptions       uint64
}

// Plan asks what registering job would do (PUT /v1/job/:id/plan), with the
// difference to the stored job when diff is set.
func (j *Jobs) Plan(job *messages.Job, diff bool, w *WriteOptions) (*JobPlanResponse, *WriteMeta, error) {
	var out JobPlanResponse
	wm, err := j.c.write(http.MethodPut, "/v1/job/"+escape(job.GetID())+"/plan", &JobPlanRequest{Job: job, Diff: diff}, &out, w)
	if err != nil {
		return nil, nil, err
	}
	return &out, wm, nil
}
