package state

import (
	"github.com/troupe-dev/troupe/messages"
)

// The event stream's topics (Nomad's names).
const (
	TopicJob        = "Job"
	TopicEvaluation = "Evaluation"
	TopicAllocation = "Allocation"
	TopicDeployment = "Deployment"
	TopicNode       = "Node"
	TopicNodePool   = "NodePool"
	TopicCSIVolume  = "CSIVolume"
	TopicCSIPlugin  = "CSIPlugin"
	TopicService    = "Service"
)

// EventSource turns commands eventsOf does not know into events: it reports
// whether it knew the command. Register one with AddEventSource from an
// init function.
type EventSource func(cmd *messages.Command, c *EventCollector) bool

var eventSources []EventSource

// AddEventSource registers src; call it only from init functions.
func AddEventSource(src EventSource) { eventSources = append(eventSources, src) }

// EventCollector gathers the events of one applied command: every object
// it changed, each once, with the command's event type (as Nomad does:
// an evaluation a node registration created is a NodeRegistration event).
type EventCollector struct {
	index uint64
	typ   string
	snap  *Snap // as of index
	prev  *Snap // as before index; nil: unknown
	seen  map[string]bool
	out   []StreamEvent
}

// Add appends one event unless the same topic and key is already there.
func (c *EventCollector) Add(topic, key, ns string, filterKeys []string, payload any, deleted bool) {
	if c.seen == nil {
		c.seen = map[string]bool{}
	}
	if id := topic + "\x00" + key; !c.seen[id] {
		c.seen[id] = true
		c.out = append(c.out, StreamEvent{Topic: topic, Type: c.typ, Key: key, Namespace: ns,
			FilterKeys: filterKeys, Index: c.index, Payload: payload, Deleted: deleted})
	}
}

// eventsOf is every event of one applied command, read from the store as
// it was right after it (e.snap) and before it (prev, which may be nil).
// Commands Nomad emits no event for emit none here either: a job version
// marked stable, variables and their keyring, the scheduler
// configuration, namespaces and the ACL bootstrap.
func eventsOf(e eventEntry, prev *Snap) []StreamEvent {
	c := &EventCollector{index: e.index, snap: e.snap, prev: prev}
	if !c.jobCommand(e) && !c.nodeCommand(e.cmd) && !c.otherCommand(e.cmd) && !c.aclCommand(e.cmd) {
		for _, src := range eventSources {
			if src(e.cmd, c) {
				break
			}
		}
	}
	return c.out
}

func (c *EventCollector) jobCommand(e eventEntry) bool {
	switch m := e.cmd.Cmd.(type) {
	case *messages.Command_RegisterJob:
		c.typ = "JobRegistered"
		c.job(m.RegisterJob.GetJob().GetNamespace(), m.RegisterJob.GetJob().GetID())
		c.evals(m.RegisterJob.GetEval())
	case *messages.Command_DispatchJob:
		c.typ = "JobRegistered"
		if r, ok := e.resp.(*DispatchJobResult); ok {
			c.job(m.DispatchJob.GetJob().GetNamespace(), r.JobID)
			c.evalID(r.EvalID)
		}
	case *messages.Command_DeregisterJob:
		c.typ = "JobDeregistered"
		c.job(m.DeregisterJob.Namespace, m.DeregisterJob.JobID)
		c.evals(m.DeregisterJob.GetEval())
	case *messages.Command_UpsertEvals:
		c.typ = "EvaluationUpdated"
		c.evals(m.UpsertEvals.Evals...)
	case *messages.Command_ApplyPlan:
		c.typ = "PlanResult"
		c.plan(m.ApplyPlan, e.resp)
	case *messages.Command_UpdateAllocsFromClient:
		c.typ = "AllocationUpdated"
		for _, a := range m.UpdateAllocsFromClient.Allocs {
			c.alloc(a.GetID())
		}
		c.evals(m.UpdateAllocsFromClient.Evals...)
	case *messages.Command_StopAlloc:
		c.typ = "AllocationUpdateDesiredStatus"
		c.alloc(m.StopAlloc.AllocID)
		c.evals(m.StopAlloc.GetEval())
	default:
		return false
	}
	return true
}

func (c *EventCollector) plan(p *messages.ApplyPlan, resp any) {
	for _, s := range p.Stop {
		c.alloc(s.GetAllocID())
	}
	for _, s := range p.Preemptions {
		c.alloc(s.GetAllocID())
	}
	if r, ok := resp.(*messages.ApplyPlanResult); ok {
		for _, id := range r.Placed {
			c.alloc(id)
		}
	}
	c.evals(p.GetEvalUpdate())
	c.evals(p.NewEvals...)
}

func (c *EventCollector) nodeCommand(cmd *messages.Command) bool {
	var evals []*messages.Evaluation
	var nodeID string
	switch m := cmd.Cmd.(type) {
	case *messages.Command_RegisterNode:
		c.typ, nodeID = "NodeRegistration", m.RegisterNode.GetNode().GetID()
		evals = append(m.RegisterNode.Evals, m.RegisterNode.GetEval())
	case *messages.Command_UpdateNodeStatus:
		// Nomad's TypeNodeEvent is "NodeStreamEvent".
		c.typ, nodeID, evals = "NodeStreamEvent", m.UpdateNodeStatus.NodeID, m.UpdateNodeStatus.Evals
	case *messages.Command_UpdateNodeDrain:
		c.typ, nodeID, evals = "NodeDrain", m.UpdateNodeDrain.NodeID, m.UpdateNodeDrain.Evals
	case *messages.Command_UpdateNodeEligibility:
		c.typ, nodeID, evals = "NodeDrain", m.UpdateNodeEligibility.NodeID, m.UpdateNodeEligibility.Evals
	case *messages.Command_UpsertNodePools:
		c.typ = "NodePoolUpserted"
		for _, p := range m.UpsertNodePools.Pools {
			c.pool(p.GetName())
		}
		return true
	case *messages.Command_DeleteNodePools:
		c.typ = "NodePoolDeleted"
		for _, name := range m.DeleteNodePools.Names {
			c.pool(name)
		}
		return true
	default:
		return false
	}
	c.node(nodeID)
	c.nodeAllocs(nodeID)
	c.evals(evals...)
	return true
}

func (c *EventCollector) otherCommand(cmd *messages.Command) bool {
	switch m := cmd.Cmd.(type) {
	case *messages.Command_RegisterVolume:
		c.typ = "CSIVolumeRegistered"
		c.volume(m.RegisterVolume.GetVolume().GetID())
	case *messages.Command_DeregisterVolume:
		c.typ = "CSIVolumeDeregistered"
		c.volume(m.DeregisterVolume.VolumeID)
	case *messages.Command_ClaimVolume:
		c.typ = "CSIVolumeClaim"
		c.volume(m.ClaimVolume.VolumeID)
	case *messages.Command_UpdateClaimState:
		c.typ = "CSIVolumeClaim"
		c.volume(m.UpdateClaimState.VolumeID)
	case *messages.Command_UpsertPluginInstances:
		// Nomad has no event type of a plugin's own: its instances come
		// with the node's fingerprint, a node registration.
		c.typ = "NodeRegistration"
		c.nodePlugins(m.UpsertPluginInstances)
	case *messages.Command_GarbageCollect:
		c.gc(m.GarbageCollect)
	case *messages.Command_UpsertServiceRegistrations:
		c.typ = "ServiceRegistration"
		c.allocServices(m.UpsertServiceRegistrations.AllocID)
	case *messages.Command_DeleteServiceRegistrationsByAlloc:
		c.typ = "ServiceDeregistration"
		for _, id := range m.DeleteServiceRegistrationsByAlloc.AllocIDs {
			c.allocServices(id)
		}
	case *messages.Command_DeleteServiceRegistrationByID:
		c.typ = "ServiceDeregistration"
		if c.prev != nil {
			c.service(c.prev.ServiceByID(m.DeleteServiceRegistrationByID.Namespace, m.DeleteServiceRegistrationByID.ID), true)
		}
	default:
		return c.deploymentCommand(cmd)
	}
	return true
}

func (c *EventCollector) deploymentCommand(cmd *messages.Command) bool {
	var id string
	var eval *messages.Evaluation
	switch m := cmd.Cmd.(type) {
	case *messages.Command_UpsertDeployment:
		d := m.UpsertDeployment.GetDeployment()
		c.typ, id, eval = "DeploymentStatusUpdate", d.GetID(), m.UpsertDeployment.GetEval()
		c.deployment(id)
		c.jobDeployments(d.GetNamespace(), d.GetJobID()) // the older ones it cancelled
	case *messages.Command_UpdateDeploymentStatus:
		c.typ, id, eval = "DeploymentStatusUpdate", m.UpdateDeploymentStatus.DeploymentID, m.UpdateDeploymentStatus.GetEval()
		c.job(m.UpdateDeploymentStatus.GetJob().GetNamespace(), m.UpdateDeploymentStatus.GetJob().GetID())
		if d := c.snap.DeploymentByID(id); d != nil {
			c.jobIfChanged(d.Namespace, d.JobID) // a success marks its version stable
		}
	case *messages.Command_PromoteDeployment:
		c.typ, id, eval = "DeploymentPromotion", m.PromoteDeployment.DeploymentID, m.PromoteDeployment.GetEval()
	case *messages.Command_SetAllocHealth:
		c.typ, id, eval = "DeploymentAllocHealth", m.SetAllocHealth.DeploymentID, m.SetAllocHealth.GetEval()
		for _, a := range append(m.SetAllocHealth.HealthyAllocationIDs, m.SetAllocHealth.UnhealthyAllocationIDs...) {
			c.alloc(a)
		}
	default:
		return false
	}
	c.deployment(id)
	c.evals(eval)
	return true
}

func (c *EventCollector) gc(g *messages.GarbageCollect) {
	if c.prev == nil {
		return // what was purged is known only from the state before
	}
	c.typ = "JobBatchDeregistered"
	for _, j := range g.Jobs {
		if c.snap.JobByID(j.Namespace, j.ID) == nil {
			c.job(j.Namespace, j.ID)
		}
	}
	c.typ = "NodeDeregistration"
	for _, id := range g.NodeIDs {
		if c.snap.NodeByID(id) == nil {
			c.node(id)
		}
	}
}
