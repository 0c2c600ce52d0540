package alloc

import (
	"fmt"
	"hash/fnv"
	"sort"
	"time"

	"github.com/asynkron/protoactor-go/actor"

	"github.com/troupe-dev/troupe/messages"
)

// The alloc actor's side of service checks: while the allocation runs
// (client status running, no stop wanted) it has one check actor per
// check of its services (checks/<id>), and keeps each one's latest result.
// When every check passes, or stops passing, it sends itself ChecksPassing;
// this is where deployment health (health_check = "checks") hooks in.

// ChecksPassing says whether all of an allocation's checks pass now. The
// alloc actor sends it to itself each time the answer changes (the first
// time once every check has a result); an allocation without checks
// never sends it.
type ChecksPassing struct {
	AllocID string
	Passing bool
}

// ChecksRequest asks an alloc actor for its checks' latest results; it
// answers ChecksResponse.
type ChecksRequest struct{}

// ChecksResponse are an allocation's checks' latest results, by check ID.
type ChecksResponse struct {
	Checks map[string]*CheckStatus
}

// CheckStatus is one check's latest result (Nomad's AllocCheckStatus).
type CheckStatus struct {
	ID, Check, Group, Mode, Output, Service, Task, Status string
	StatusCode                                            int
	Timestamp                                             int64 // unix seconds
}

// checkSet is the alloc actor's record of its checks.
type checkSet struct {
	running bool
	specs   []*checkSpec
	results map[string]*CheckStatus
	passing *bool // nil: not every check has a result yet
}

// allocChecks are the checks of the allocation's services, resolved.
func allocChecks(a *messages.Allocation, node *messages.Node, r serviceRefs) []*checkSpec {
	var out []*checkSpec
	for _, in := range allocServices(a, r) {
		s := in.svc
		for _, c := range s.GetChecks() {
			mode := c.GetAddressMode()
			if mode == "" {
				mode = s.GetAddressMode()
			}
			label := c.GetPortLabel()
			if label == "" {
				label = s.GetPortLabel()
			}
			addr, port := serviceAddress(a, node, mode, label)
			task := in.task
			if task == "" {
				task = c.GetTaskName()
			}
			if task == "" {
				task = s.GetTaskName()
			}
			spec := &checkSpec{
				Name: c.GetName(), Service: s.GetName(), Group: a.GetTaskGroup(), Task: task,
				Type: c.GetType(), Address: addr, Port: port, Path: c.GetPath(), Method: c.GetMethod(),
				Protocol: c.GetProtocol(), Body: c.GetBody(), TLSSkipVerify: c.GetTLSSkipVerify(),
				Command: c.GetCommand(), Args: c.GetArgs(),
				Interval: time.Duration(c.GetInterval()), Timeout: time.Duration(c.GetTimeout()),
			}
			if len(c.GetHeader()) > 0 {
				spec.Header = map[string][]string{}
				for k, v := range c.GetHeader() {
					spec.Header[k] = v.GetValues()
				}
			}
			if cr := c.GetCheckRestart(); cr != nil {
				spec.Limit, spec.Grace, spec.IgnoreWarnings = int(cr.GetLimit()), time.Duration(cr.GetGrace()), cr.GetIgnoreWarnings()
			}
			spec.ID = checkID(a.GetID(), spec)
			out = append(out, spec)
		}
	}
	return out
}

// checkID is a stable ID of a check of an allocation.
func checkID(allocID string, c *checkSpec) string {
	h := fnv.New64a()
	for _, p := range []string{allocID, c.Group, c.Task, c.Service, c.Name} {
		_, _ = h.Write([]byte(p))
		_, _ = h.Write([]byte{0})
	}
	return fmt.Sprintf("%016x", h.Sum64())
}

// syncChecks starts the check actors when the allocation runs and stops
// them when it no longer does.
func (a *Actor) syncChecks(ctx actor.Context) {
	if a.checks == nil {
		a.checks = &checkSet{results: map[string]*CheckStatus{}}
	}
	want := a.alloc.GetClientStatus() == messages.AllocClientStatusRunning && !a.stopWanted()
	switch {
	case want && !a.checks.running:
		a.checks.running = true
		a.checks.specs = allocChecks(a.alloc, a.spec.Node, a.refsFor())
		script := a.execScript(a.spec.AllocRoot, a.alloc.GetID())
		for _, spec := range a.checks.specs {
			a.checks.results[spec.ID] = a.checkStatus(spec, CheckPending, checkOutcome{at: a.spec.Clock.Now()})
			props := a.spec.Registry.Props("check", newCheckActor(spec, a.spec.Clock, script, a.log))
			if _, err := ctx.SpawnNamed(props, "checks/"+spec.ID); err != nil {
				a.log.Error("starting a check failed", "check", spec.Name, "error", err)
			}
		}
	case !want && a.checks.running:
		a.checks.running = false
		prefix := ctx.Self().GetId() + "/checks/"
		for _, pid := range ctx.Children() {
			if len(pid.GetId()) > len(prefix) && pid.GetId()[:len(prefix)] == prefix {
				ctx.Stop(pid)
			}
		}
		a.checks.results = map[string]*CheckStatus{}
		a.checks.passing = nil
	}
}

func (a *Actor) checkStatus(spec *checkSpec, status string, o checkOutcome) *CheckStatus {
	return &CheckStatus{ID: spec.ID, Check: spec.Name, Group: a.alloc.GetTaskGroup(), Mode: "healthiness",
		Output: o.output, Service: spec.Service, Task: spec.Task, Status: status, StatusCode: o.code,
		Timestamp: o.at.Unix()}
}

// onCheckResult records a check's outcome, and tells itself when all of
// them pass, or stop passing.
func (a *Actor) onCheckResult(ctx actor.Context, m *checkResult) {
	if a.checks == nil || !a.checks.running {
		return // a late result of a stopped check
	}
	a.checks.results[m.spec.ID] = a.checkStatus(m.spec, m.status, m.o)
	if changed, passing := a.checks.verdict(); changed {
		ctx.Send(ctx.Self(), &ChecksPassing{AllocID: a.alloc.GetID(), Passing: passing})
	}
}

// verdict folds the results: every check passing, or one failing; changed
// says the answer is new (none until every check has a result, or one
// fails).
func (s *checkSet) verdict() (changed, passing bool) {
	passing, known := true, true
	for _, spec := range s.specs {
		switch s.results[spec.ID].GetStatus() {
		case CheckSuccess:
		case CheckFailure:
			passing = false
		default:
			known = false
		}
	}
	if !known && passing {
		return false, false
	}
	if s.passing != nil && *s.passing == passing {
		return false, passing
	}
	s.passing = &passing
	return true, passing
}

// GetStatus is the status, "" for nil.
func (c *CheckStatus) GetStatus() string {
	if c == nil {
		return ""
	}
	return c.Status
}

// onChecksPassing records whether the allocation's checks pass (the hook
// for deployment health).
func (a *Actor) onChecksPassing(ctx actor.Context, m *ChecksPassing) {
	a.log.Info("service checks", "passing", m.Passing)
	a.onChecksHealth(ctx, m.Passing)
}

// onCheckRestart restarts the check's task (every running task for a
// group check that names none) through the task actors, as an
// operator's restart does.
func (a *Actor) onCheckRestart(ctx actor.Context, m *checkRestart) {
	if a.checks == nil || !a.checks.running {
		return
	}
	pids, err := a.opTargets(ctx, m.task, false)
	if err != nil {
		a.log.Warn("check_restart: no task to restart", "check", m.check, "error", err)
		return
	}
	for _, pid := range pids {
		ctx.Send(pid, &messages.RestartTask{Reason: fmt.Sprintf("healthcheck: check %q unhealthy", m.check)})
	}
}

// onChecksRequest answers the checks' latest results.
func (a *Actor) onChecksRequest(ctx actor.Context) {
	out := &ChecksResponse{Checks: map[string]*CheckStatus{}}
	if a.checks != nil {
		ids := make([]string, 0, len(a.checks.results))
		for id := range a.checks.results {
			ids = append(ids, id)
		}
		sort.Strings(ids)
		for _, id := range ids {
			c := *a.checks.results[id]
			out.Checks[id] = &c
		}
	}
	ctx.Respond(out)
}
