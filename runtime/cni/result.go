package cni

import (
	"encoding/json"
	"fmt"
	"net/netip"
	"strings"

	"github.com/containernetworking/cni/pkg/types"
	types100 "github.com/containernetworking/cni/pkg/types/100"
	"github.com/containernetworking/cni/pkg/types/create"
	"github.com/containernetworking/cni/pkg/utils"
)

// SetupRequest names the allocation whose network is set up, restored or
// torn down, and the host ports to map into it.
type SetupRequest struct {
	AllocID string // the CNI container ID and the netns name
	JobID   string
	Group   string
	Ports   []PortMapping
}

// PortMapping maps HostPort on every host address to ContainerPort on the
// allocation's address.
type PortMapping struct {
	Label         string // the port's name in the job, for the caller
	HostPort      int    // 1-65535
	ContainerPort int    // 1-65535; 0 means the same as HostPort
	Protocol      string // "tcp" (the default) or "udp"
}

// Result is an allocation's network.
type Result struct {
	NetnsPath string        // the netns to run the allocation's tasks in
	Interface string        // the allocation's interface in the netns (eth0)
	IP        netip.Addr    // the allocation's IPv4 address
	Prefix    netip.Prefix  // IP with the subnet's length
	Gateway   netip.Addr    // the bridge's address
	Ports     []PortMapping // the mappings in force, normalised
	// RawResult is the CNI result as JSON. The client persists it with the
	// allocation and passes it back to Restore and Teardown.
	RawResult []byte
	// Recreated is set by Restore when it did not keep the netns (it was
	// gone, or failed CHECK) but made a new one: tasks still running in
	// the old one have lost their network and must be restarted.
	Recreated bool
}

// normalize checks r and returns it with defaults filled in.
func (r SetupRequest) normalize() (SetupRequest, error) {
	if r.AllocID == "" {
		return r, fmt.Errorf("%w: allocation ID is empty", ErrInvalidRequest)
	}
	if e := utils.ValidateContainerID(r.AllocID); e != nil {
		return r, fmt.Errorf("%w: allocation ID %q: %s", ErrInvalidRequest, r.AllocID, e.Msg)
	}
	for _, f := range [][2]string{{"job ID", r.JobID}, {"group", r.Group}} {
		if strings.ContainsAny(f[1], ";=") {
			return r, fmt.Errorf("%w: %s %q contains ';' or '=', which CNI_ARGS cannot carry",
				ErrInvalidRequest, f[0], f[1])
		}
	}
	ports := make([]PortMapping, len(r.Ports))
	seen := map[string]bool{}
	for i, p := range r.Ports {
		if p.Protocol == "" {
			p.Protocol = "tcp"
		}
		if p.ContainerPort == 0 {
			p.ContainerPort = p.HostPort
		}
		switch {
		case p.Protocol != "tcp" && p.Protocol != "udp":
			return r, fmt.Errorf("%w: port %q: protocol %q is not tcp or udp", ErrInvalidRequest, p.Label, p.Protocol)
		case p.HostPort < 1 || p.HostPort > 65535:
			return r, fmt.Errorf("%w: port %q: host port %d is out of range", ErrInvalidRequest, p.Label, p.HostPort)
		case p.ContainerPort < 1 || p.ContainerPort > 65535:
			return r, fmt.Errorf("%w: port %q: container port %d is out of range",
				ErrInvalidRequest, p.Label, p.ContainerPort)
		}
		key := fmt.Sprintf("%d/%s", p.HostPort, p.Protocol)
		if seen[key] {
			return r, fmt.Errorf("%w: host port %s is mapped twice", ErrInvalidRequest, key)
		}
		seen[key] = true
		ports[i] = p
	}
	r.Ports = ports
	return r, nil
}

// cniArgs are the CNI_ARGS of r: the allocation, job and group IDs.
func (r SetupRequest) cniArgs() [][2]string {
	args := [][2]string{{"IgnoreUnknown", "1"}, {"TROUPE_ALLOC_ID", r.AllocID}}
	if r.JobID != "" {
		args = append(args, [2]string{"TROUPE_JOB_ID", r.JobID})
	}
	if r.Group != "" {
		args = append(args, [2]string{"TROUPE_GROUP", r.Group})
	}
	return args
}

// capabilityArgs are the runtime config of r: portmap's portMappings.
func (r SetupRequest) capabilityArgs() map[string]any {
	mappings := make([]map[string]any, 0, len(r.Ports))
	for _, p := range r.Ports {
		mappings = append(mappings, map[string]any{
			"hostPort": p.HostPort, "containerPort": p.ContainerPort, "protocol": p.Protocol,
		})
	}
	return map[string]any{"portMappings": mappings}
}

// decodeResult reads a CNI result as JSON, of any version, and returns it
// in CNIVersion, the version the plugins take as prevResult.
func decodeResult(raw []byte) (types.Result, error) {
	res, err := create.CreateFromBytes(raw)
	if err != nil {
		return nil, fmt.Errorf("%w: %v", ErrBadResult, err)
	}
	if res, err = res.GetAsVersion(CNIVersion); err != nil {
		return nil, fmt.Errorf("%w: %v", ErrBadResult, err)
	}
	return res, nil
}

// newResult builds the Result for an allocation from its CNI result.
func newResult(res types.Result, netnsPath string, req SetupRequest) (*Result, error) {
	cur, err := types100.GetResult(res)
	if err != nil {
		return nil, fmt.Errorf("%w: %v", ErrBadResult, err)
	}
	persisted, err := res.GetAsVersion(CNIVersion)
	if err != nil {
		return nil, fmt.Errorf("%w: %v", ErrBadResult, err)
	}
	raw, err := json.Marshal(persisted)
	if err != nil {
		return nil, fmt.Errorf("%w: %v", ErrBadResult, err)
	}
	out := &Result{NetnsPath: netnsPath, Interface: IfName, Ports: req.Ports, RawResult: raw}
	for _, ipc := range cur.IPs {
		if ipc.Interface == nil || *ipc.Interface < 0 || *ipc.Interface >= len(cur.Interfaces) {
			continue
		}
		if iface := cur.Interfaces[*ipc.Interface]; iface.Name != IfName || iface.Sandbox == "" {
			continue
		}
		addr, ok := netip.AddrFromSlice(ipc.Address.IP)
		if !ok || !addr.Unmap().Is4() {
			continue
		}
		ones, _ := ipc.Address.Mask.Size()
		out.IP = addr.Unmap()
		out.Prefix = netip.PrefixFrom(out.IP, ones)
		out.Gateway, _ = netip.AddrFromSlice(ipc.Gateway)
		out.Gateway = out.Gateway.Unmap()
		return out, nil
	}
	return nil, fmt.Errorf("%w: no IPv4 address on %s", ErrBadResult, IfName)
}

// resultAddrs returns the IPv4 addresses in a CNI result (none for nil).
func resultAddrs(res types.Result) []netip.Addr {
	if res == nil {
		return nil
	}
	cur, err := types100.GetResult(res)
	if err != nil {
		return nil
	}
	var ips []netip.Addr
	for _, ipc := range cur.IPs {
		if a, ok := netip.AddrFromSlice(ipc.Address.IP); ok && a.Unmap().Is4() {
			ips = append(ips, a.Unmap())
		}
	}
	return ips
}
