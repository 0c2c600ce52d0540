package messages

import (
	"time"

	"github.com/hashicorp/go-uuid"
)

// NewEval builds a pending evaluation of job, triggered by trigger (and by
// nodeID when a node's change caused it), stamped with now.
func NewEval(job *Job, trigger, nodeID string, now time.Time) *Evaluation {
	id, err := uuid.GenerateUUID()
	if err != nil {
		panic(err) // crypto/rand failed: nothing sensible to do
	}
	return &Evaluation{ID: id, Namespace: job.GetNamespace(), Priority: job.GetPriority(), Type: job.GetType(),
		TriggeredBy: trigger, JobID: job.GetID(), NodeID: nodeID, Status: "pending",
		CreateTime: now.UnixNano(), ModifyTime: now.UnixNano()}
}
