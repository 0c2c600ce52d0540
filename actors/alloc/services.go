package alloc

import (
	"fmt"
	"strconv"

	"github.com/troupe-dev/troupe/messages"
)

// Service registrations (Nomad's native provider). While its tasks run,
// the allocation reports the registrations of its group's and tasks'
// services with its status (Allocation.ServiceRegistrations); once it
// stops, or is asked to, it reports none, and the servers drop them. A
// restarted agent reports the same set again, which changes nothing.

// nodeIPAttribute is the node attribute holding the host's address.
const nodeIPAttribute = "unique.network.ip-address"

// svcInstance is one service of the allocation: the group's (task "") or
// a task's.
type svcInstance struct {
	task string
	svc  *messages.Service
}

// allocServices are the allocation's services, group ones first.
func allocServices(a *messages.Allocation) []svcInstance {
	g := groupOf(a)
	var out []svcInstance
	for _, s := range g.GetServices() {
		out = append(out, svcInstance{svc: s})
	}
	for _, t := range g.GetTasks() {
		for _, s := range t.GetServices() {
			out = append(out, svcInstance{task: t.GetName(), svc: s})
		}
	}
	return out
}

// serviceID is Nomad's registration ID shape:
// _nomad-task-<alloc>-<task or group-<group>>-<service>-<port>.
func serviceID(a *messages.Allocation, in svcInstance) string {
	owner := in.task
	if owner == "" {
		owner = "group-" + a.GetTaskGroup()
	}
	return fmt.Sprintf("_nomad-task-%s-%s-%s-%s", a.GetID(), owner, in.svc.GetName(), in.svc.GetPortLabel())
}

// registrations are the allocation's registrations on node; canary says
// to use the canary tags (when a service has some).
func registrations(a *messages.Allocation, node *messages.Node, canary bool) []*messages.ServiceRegistration {
	var out []*messages.ServiceRegistration
	for _, in := range allocServices(a) {
		s := in.svc
		if p := s.GetProvider(); p != "" && p != "nomad" {
			continue
		}
		addr, port := serviceAddress(a, node, s.GetAddressMode(), s.GetPortLabel())
		if s.GetAddress() != "" {
			addr = s.GetAddress()
		}
		tags := s.GetTags()
		if canary && len(s.GetCanaryTags()) > 0 {
			tags = s.GetCanaryTags()
		}
		out = append(out, &messages.ServiceRegistration{
			ID: serviceID(a, in), ServiceName: s.GetName(), Namespace: a.GetNamespace(),
			NodeID: a.GetNodeID(), Datacenter: node.GetDatacenter(), JobID: a.GetJobID(),
			AllocID: a.GetID(), Tags: append([]string(nil), tags...), Address: addr, Port: int32(port),
		})
	}
	return out
}

// serviceAddress is where a service or check of the allocation listens:
// for address mode alloc the allocation's own address (its bridge
// network) and the task's port; otherwise (auto, host) the host's
// address and the host port. A port label that is a number is that
// port; an unknown one, or none, is port 0.
func serviceAddress(a *messages.Allocation, node *messages.Node, mode, label string) (string, int) {
	hostIP := node.GetAttributes()[nodeIPAttribute]
	if hostIP == "" {
		hostIP = "127.0.0.1"
	}
	allocIP := a.GetNetworkStatus().GetAddress()
	if mode == "alloc" && allocIP == "" {
		allocIP = hostIP
	}
	if n, err := strconv.Atoi(label); err == nil {
		if mode == "alloc" {
			return allocIP, n
		}
		return hostIP, n
	}
	for _, p := range allocPorts(a) {
		if p.label != label {
			continue
		}
		if mode == "alloc" {
			return allocIP, p.to
		}
		if p.hostIP != "" {
			return p.hostIP, p.host
		}
		return hostIP, p.host
	}
	if mode == "alloc" {
		return allocIP, 0
	}
	return hostIP, 0
}

// reportedServices is the set the allocation reports now: its
// registrations while it runs and is not asked to stop, else none (nil:
// a group without services says nothing).
func (a *Actor) reportedServices() *messages.AllocServiceRegistrations {
	if len(allocServices(a.alloc)) == 0 {
		return nil
	}
	out := &messages.AllocServiceRegistrations{}
	if a.alloc.GetClientStatus() == messages.AllocClientStatusRunning && !a.stopWanted() {
		out.Registrations = registrations(a.alloc, a.spec.Node, false)
	}
	return out
}
