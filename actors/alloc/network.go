package alloc

import (
	"fmt"
	"math"
	"net"
	"strconv"

	"github.com/troupe-dev/troupe/actors"
	"github.com/troupe-dev/troupe/messages"
	"github.com/troupe-dev/troupe/runtime/clientstate"
	"github.com/troupe-dev/troupe/runtime/cni"
)

// Network modes of a group's network block that the client runs.
const (
	networkModeHost   = "host"
	networkModeBridge = "bridge"
)

// Task event types of the network.
const (
	// eventNetworkRecreated: the allocation's network namespace was made
	// anew after an agent restart (its CHECK failed), so the re-attached
	// task, which had lost its network, is started again in the new one.
	eventNetworkRecreated = "Network Recreated"
)

// defaultNetworkAttempts bounds the network teardown tries; by default
// only defaultNetworkRetry's deadline does: a teardown that keeps failing
// (iptables held by another process for a long while) keeps its record,
// and its static ports stay reserved, until it succeeds or a day passed
// (then the agent's cni GC removes what is left, at its next start).
const defaultNetworkAttempts = math.MaxInt32

// defaultNetworkRetry is the backoff between network teardown attempts:
// 1 s doubling to 1 min, for 24 h, as for CSI unpublish, for at most
// defaultNetworkAttempts tries.
func defaultNetworkRetry() actors.Retry {
	r := actors.DefaultRetry()
	r.Attempts = defaultNetworkAttempts
	return r
}

// containerdDriver names the containerd driver: its tasks get the network
// namespace and the csi volume mounts through their driver config
// ("netns_path", "volume_mounts") instead of exec's bind mounts.
const containerdDriver = "containerd"

// wantsBridge reports whether the allocation's group asks for a bridge
// network; a mode that this client cannot give is an error.
func wantsBridge(a *messages.Allocation) (bool, error) {
	nets := groupOf(a).GetNetworks()
	if len(nets) == 0 {
		return false, nil
	}
	switch m := nets[0].GetMode(); m {
	case "", networkModeHost:
		return false, nil
	case networkModeBridge:
		return true, nil
	default:
		return false, fmt.Errorf("%w: %q (this client runs %q and %q)", errNetworkMode, m, networkModeHost, networkModeBridge)
	}
}

// allocPort is one of the allocation's ports: its label, the host port
// (Value), the port the task listens on, and the host address when the
// scheduler named one.
type allocPort struct {
	label  string
	host   int
	to     int
	hostIP string
}

// allocPorts are the allocation's ports: the ones the scheduler allocated
// (AllocatedResources.Shared.Networks, every reserved and dynamic port
// with its Value), or, before it allocated any, the group's reserved
// ports. To is the task's port; 0 (or less) means the host port.
func allocPorts(a *messages.Allocation) []allocPort {
	nets := a.GetAllocatedResources().GetShared().GetNetworks()
	fallback := len(nets) == 0
	if fallback {
		nets = groupOf(a).GetNetworks()
	}
	var out []allocPort
	for _, n := range nets {
		ports := n.GetReservedPorts()
		if !fallback {
			ports = append(ports[:len(ports):len(ports)], n.GetDynamicPorts()...)
		}
		for _, p := range ports {
			to := int(p.GetTo())
			if to <= 0 {
				to = int(p.GetValue())
			}
			out = append(out, allocPort{label: p.GetLabel(), host: int(p.GetValue()), to: to, hostIP: n.GetIP()})
		}
	}
	return out
}

// setupRequest is the cni request for the allocation: each port mapped
// for tcp and udp, as Nomad maps them.
func setupRequest(a *messages.Allocation) (cni.SetupRequest, error) {
	req := cni.SetupRequest{AllocID: a.GetID(), JobID: a.GetJobID(), Group: a.GetTaskGroup()}
	for _, p := range allocPorts(a) {
		if p.host <= 0 {
			return req, fmt.Errorf("%w: port %q has no host port", cni.ErrInvalidRequest, p.label)
		}
		for _, proto := range []string{"tcp", "udp"} {
			req.Ports = append(req.Ports, cni.PortMapping{Label: p.label, HostPort: p.host, ContainerPort: p.to, Protocol: proto})
		}
	}
	return req, nil
}

// networkRecord is what the client keeps of a CNI result.
func networkRecord(res *cni.Result) *clientstate.AllocNetwork {
	rec := &clientstate.AllocNetwork{NetnsPath: res.NetnsPath, Interface: res.Interface,
		RawResult: append([]byte(nil), res.RawResult...)}
	if res.IP.IsValid() {
		rec.IP = res.IP.String()
	}
	if res.Gateway.IsValid() {
		rec.Gateway = res.Gateway.String()
	}
	return rec
}

// networkStatus is what the server learns of the allocation's network.
func networkStatus(rec *clientstate.AllocNetwork) *messages.NetworkStatus {
	if rec == nil || rec.IP == "" {
		return nil
	}
	return &messages.NetworkStatus{InterfaceName: rec.Interface, Address: rec.IP}
}

// portVars are the port variables of a task, without their TROUPE_ or
// NOMAD_ prefix, named as Nomad names them: PORT_<label> (the port the
// task listens on: To, or the host port when To is 0), HOST_PORT_<label>
// (the host port) and, when the scheduler named the host address,
// IP_<label>, HOST_IP_<label>, ADDR_<label> and HOST_ADDR_<label>; with a
// bridge network also ALLOC_IP_<label>, ALLOC_PORT_<label>,
// ALLOC_ADDR_<label> and ALLOC_INTERFACE_<label>: the allocation's own
// address in its namespace.
func portVars(a *messages.Allocation, rec *clientstate.AllocNetwork) map[string]string {
	vars := map[string]string{}
	for _, p := range allocPorts(a) {
		if p.host <= 0 {
			continue
		}
		l := envLabel(p.label)
		host, to := strconv.Itoa(p.host), strconv.Itoa(p.to)
		vars["PORT_"+l], vars["HOST_PORT_"+l] = to, host
		if p.hostIP != "" {
			vars["IP_"+l], vars["HOST_IP_"+l] = p.hostIP, p.hostIP
			vars["ADDR_"+l] = net.JoinHostPort(p.hostIP, host)
			vars["HOST_ADDR_"+l] = vars["ADDR_"+l]
		}
		if rec != nil && rec.IP != "" {
			vars["ALLOC_IP_"+l], vars["ALLOC_PORT_"+l] = rec.IP, to
			vars["ALLOC_ADDR_"+l] = net.JoinHostPort(rec.IP, to)
			vars["ALLOC_INTERFACE_"+l] = rec.Interface
		}
	}
	return vars
}

// envLabel makes a port label usable in a variable name: anything not a
// letter, a digit or '_' becomes '_' (the case is kept, as Nomad keeps it).
func envLabel(label string) string {
	b := []byte(label)
	for i, c := range b {
		if (c < 'A' || c > 'Z') && (c < 'a' || c > 'z') && (c < '0' || c > '9') && c != '_' {
			b[i] = '_'
		}
	}
	return string(b)
}
