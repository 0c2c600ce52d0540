package cni

import (
	"context"
	"fmt"
	"net/netip"
	"strconv"
	"strings"
)

// checkPortmap does portmap's CHECK for an IPv4 container: the host's
// PREROUTING and OUTPUT jump to CNI-HOSTPORT-DNAT, which jumps to the
// allocation's chain (found by its comment), which DNATs every mapped
// port to the allocation's address.
func (n *Network) checkPortmap(ctx context.Context, req SetupRequest, ip netip.Addr) error {
	if len(req.Ports) == 0 {
		return nil
	}
	t, err := saveTable(ctx, "nat")
	if err != nil {
		return fmt.Errorf("%w: portmap check: %v", ErrPlugin, err)
	}
	jumps := map[string]bool{}
	chain := ""
	for _, r := range t.rules {
		if r.target() == "CNI-HOSTPORT-DNAT" {
			jumps[r.chain] = true
		}
		if net, id := r.owner(); r.chain == "CNI-HOSTPORT-DNAT" && net == n.list.Name && id == req.AllocID {
			chain = r.target()
		}
	}
	switch {
	case !jumps["PREROUTING"] || !jumps["OUTPUT"]:
		return fmt.Errorf("%w: portmap check: PREROUTING or OUTPUT does not jump to CNI-HOSTPORT-DNAT", ErrPlugin)
	case chain == "" || !t.chains[chain]:
		return fmt.Errorf("%w: portmap check: no DNAT chain for allocation %s", ErrPlugin, req.AllocID)
	}
	for _, p := range req.Ports {
		want := []string{"-p " + p.Protocol + " ", "--dport " + strconv.Itoa(p.HostPort) + " ",
			"-j DNAT --to-destination " + netip.AddrPortFrom(ip, uint16(p.ContainerPort)).String() + " "}
		if !hasRule(t, chain, want) {
			return fmt.Errorf("%w: portmap check: no DNAT of port %d/%s to %s:%d in %s",
				ErrPlugin, p.HostPort, p.Protocol, ip, p.ContainerPort, chain)
		}
	}
	return nil
}

// hasRule reports whether chain has a rule containing every part.
func hasRule(t *table, chain string, parts []string) bool {
	for _, r := range t.rules {
		if r.chain != chain {
			continue
		}
		spec, all := " "+r.spec+" ", true
		for _, part := range parts {
			all = all && strings.Contains(spec, " "+part)
		}
		if all {
			return true
		}
	}
	return false
}
