package alloc

import (
	"fmt"
	"strconv"

	"google.golang.org/protobuf/proto"

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

// serviceRefs are what a service's strings (${NOMAD_JOB_NAME}, ${node.*},
// ...) refer to: its task's environment, or for a group service the
// group's first task's.
type serviceRefs func(task string) refs

// refsFor builds the allocation's serviceRefs.
func (a *Actor) refsFor() serviceRefs {
	cache := map[string]refs{}
	return func(task string) refs {
		if r, ok := cache[task]; ok {
			return r
		}
		var t *messages.Task
		for _, gt := range groupOf(a.alloc).GetTasks() {
			if t == nil || gt.GetName() == task {
				t = gt
			}
		}
		r := refs{node: a.spec.Node}
		if t != nil {
			r.env = taskEnv(a.spec.AllocRoot, a.spec.Node, a.alloc, t, a.network.rec)
		}
		cache[task] = r
		return r
	}
}

// interpolated is svc with its name, tags, port and checks' strings
// interpolated (nil refs: as written).
func interpolated(svc *messages.Service, r serviceRefs, task string) *messages.Service {
	if r == nil {
		return svc
	}
	v := r(task)
	s := proto.Clone(svc).(*messages.Service)
	s.Name, s.PortLabel, s.Address = interpolate(s.Name, v), interpolate(s.PortLabel, v), interpolate(s.Address, v)
	for i, t := range s.Tags {
		s.Tags[i] = interpolate(t, v)
	}
	for i, t := range s.CanaryTags {
		s.CanaryTags[i] = interpolate(t, v)
	}
	for _, c := range s.Checks {
		c.Name, c.Path, c.PortLabel = interpolate(c.Name, v), interpolate(c.Path, v), interpolate(c.PortLabel, v)
		c.Command = interpolate(c.Command, v)
		for i, arg := range c.Args {
			c.Args[i] = interpolate(arg, v)
		}
		for _, h := range c.Header {
			for i, hv := range h.Values {
				h.Values[i] = interpolate(hv, v)
			}
		}
	}
	return s
}

// allocServices are the allocation's services, group ones first, their
// strings interpolated with r (nil: as written).
func allocServices(a *messages.Allocation, r serviceRefs) []svcInstance {
	g := groupOf(a)
	var out []svcInstance
	for _, s := range g.GetServices() {
		out = append(out, svcInstance{svc: interpolated(s, r, s.GetTaskName())})
	}
	for _, t := range g.GetTasks() {
		for _, s := range t.GetServices() {
			out = append(out, svcInstance{task: t.GetName(), svc: interpolated(s, r, t.GetName())})
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
func registrations(a *messages.Allocation, node *messages.Node, r serviceRefs, canary bool) []*messages.ServiceRegistration {
	var out []*messages.ServiceRegistration
	for _, in := range allocServices(a, r) {
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
	if len(allocServices(a.alloc, nil)) == 0 {
		return nil
	}
	out := &messages.AllocServiceRegistrations{}
	if a.alloc.GetClientStatus() == messages.AllocClientStatusRunning && !a.stopWanted() {
		out.Registrations = registrations(a.alloc, a.spec.Node, a.refsFor(), false)
	}
	return out
}
