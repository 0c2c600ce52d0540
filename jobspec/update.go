package jobspec

import (
	"time"

	"github.com/hashicorp/hcl/v2"

	"github.com/troupe-dev/troupe/messages"
	"google.golang.org/protobuf/proto"
)

// The update block (Nomad's UpdateStrategy) at job and group level. A
// group's strategy is Nomad's defaults, overlaid by the fields the job's
// block set, overlaid by the fields the group's block set; a strategy with
// max_parallel = 0 turns deployments off and is dropped from the group, as
// Nomad drops it. Only service and system jobs take update blocks; batch
// groups do not inherit the job's. Unlike Nomad's client, troupe does not
// give a job without any update block the default strategy: a job opts in
// to deployments by writing one.

var (
	updateAttrs = []attrSpec{
		{name: "stagger", field: "Stagger", dur: true},
		{name: "max_parallel", field: "MaxParallel"}, {name: "health_check", field: "HealthCheck"},
		{name: "min_healthy_time", field: "MinHealthyTime", dur: true},
		{name: "healthy_deadline", field: "HealthyDeadline", dur: true},
		{name: "progress_deadline", field: "ProgressDeadline", dur: true},
		{name: "auto_revert", field: "AutoRevert"}, {name: "auto_promote", field: "AutoPromote"},
		{name: "canary", field: "Canary"},
	}
	updateSchema = schemaOf(updateAttrs)
)

// DefaultUpdate is Nomad's DefaultUpdateStrategy.
func DefaultUpdate() *messages.UpdateStrategy {
	return &messages.UpdateStrategy{Stagger: int64(30 * time.Second), MaxParallel: 1,
		HealthCheck: messages.HealthCheckChecks, MinHealthyTime: int64(10 * time.Second),
		HealthyDeadline: int64(5 * time.Minute), ProgressDeadline: int64(10 * time.Minute)}
}

func (d *hclDecoder) update(b *hcl.Block) (*messages.UpdateStrategy, fieldSet) {
	if b == nil {
		return nil, nil
	}
	u := &messages.UpdateStrategy{}
	return u, d.decodeAttrs(d.content(b.Body, updateSchema).Attributes, updateAttrs, u)
}

// applyUpdate merges the job's update block into each group's (see the
// top of this file). jobSet and each group's update fieldSet say which
// fields the file set (nil: no block).
func applyUpdate(job *messages.Job, jobSet fieldSet, groups []groupPresence) {
	if job == nil {
		return
	}
	typ := jobType(job)
	if job.Update != nil {
		mergePolicy(job.Update, DefaultUpdate(), jobSet)
	}
	for i, g := range job.TaskGroups {
		if g == nil || i >= len(groups) {
			continue
		}
		gs := groups[i].update
		if typ == TypeBatch {
			if g.Update != nil {
				mergePolicy(g.Update, DefaultUpdate(), gs)
			}
			continue // validateUpdate refuses a group's block; the job's is not inherited
		}
		switch {
		case g.Update != nil && job.Update != nil:
			mergePolicy(g.Update, job.Update, gs)
		case g.Update != nil:
			mergePolicy(g.Update, DefaultUpdate(), gs)
		case job.Update != nil:
			g.Update = cloneUpdate(job.Update)
		}
		if g.Update != nil && !g.Update.Rolling() {
			g.Update = nil
		}
	}
}

func cloneUpdate(u *messages.UpdateStrategy) *messages.UpdateStrategy {
	return proto.Clone(u).(*messages.UpdateStrategy)
}

// canonUpdate fills what a strategy given without presence (a job built
// in code) leaves empty.
func canonUpdate(u *messages.UpdateStrategy) {
	if u != nil {
		setDefault(&u.HealthCheck, messages.HealthCheckChecks)
	}
}

// validateUpdate applies Nomad's UpdateStrategy rules.
func validateUpdate(c checker, typ string, u *messages.UpdateStrategy, group bool) {
	if u == nil {
		return
	}
	if group && typ != TypeService && typ != TypeSystem {
		c.addf("job type %q does not allow update block", typ)
		return
	}
	switch u.HealthCheck {
	case messages.HealthCheckChecks, messages.HealthCheckTaskStates, messages.HealthCheckManual:
	default:
		c.addf("health_check %q must be %q, %q or %q", u.HealthCheck, messages.HealthCheckChecks,
			messages.HealthCheckTaskStates, messages.HealthCheckManual)
	}
	if u.MaxParallel < 0 {
		c.addf("max_parallel must not be negative")
	}
	if u.Canary < 0 {
		c.addf("canary must not be negative")
	}
	if u.Canary > 0 && typ == TypeSystem {
		c.addf("canary: system jobs do not support canaries")
	}
	if u.Canary == 0 && u.AutoPromote {
		c.addf("auto_promote requires a canary count greater than zero")
	}
	nonNegative(c, "min_healthy_time", u.MinHealthyTime)
	nonNegative(c, "progress_deadline", u.ProgressDeadline)
	if u.HealthyDeadline <= 0 {
		c.addf("healthy_deadline must be greater than zero")
	}
	if u.Stagger <= 0 {
		c.addf("stagger must be greater than zero")
	}
	if u.HealthyDeadline > 0 && u.MinHealthyTime >= u.HealthyDeadline {
		c.addf("min_healthy_time must be less than healthy_deadline")
	}
	if u.ProgressDeadline != 0 && u.ProgressDeadline <= u.HealthyDeadline {
		c.addf("healthy_deadline must be less than progress_deadline")
	}
}
