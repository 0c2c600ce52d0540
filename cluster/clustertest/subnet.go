package clustertest

import (
	"context"
	"fmt"
	"net/netip"
	"strings"
)

// subnetBases are the /16 ranges the bridge subnet is carved from, in order.
var subnetBases = []netip.Prefix{
	netip.MustParsePrefix("10.213.0.0/16"),
	netip.MustParsePrefix("172.29.0.0/16"),
}

// routeTypes are the ip-route type keywords that may precede a destination.
var routeTypes = map[string]bool{
	"unicast": true, "local": true, "broadcast": true, "multicast": true,
	"throw": true, "unreachable": true, "prohibit": true, "blackhole": true,
	"nat": true, "anycast": true,
}

// usedPrefixes lists every IPv4 address and route destination on the
// machine's root namespace.
func usedPrefixes(ctx context.Context) ([]netip.Prefix, error) {
	addrs, err := run(ctx, "ip", "-o", "-4", "addr", "show")
	if err != nil {
		return nil, err
	}
	routes, err := run(ctx, "ip", "-4", "route", "show", "table", "all")
	if err != nil {
		return nil, err
	}
	return append(parseAddrPrefixes(string(addrs)), parseRoutePrefixes(string(routes))...), nil
}

// parseAddrPrefixes reads the "inet A/N" fields of `ip -o -4 addr show`.
func parseAddrPrefixes(out string) []netip.Prefix {
	var ps []netip.Prefix
	for _, line := range strings.Split(out, "\n") {
		f := strings.Fields(line)
		for i := 0; i+1 < len(f); i++ {
			if f[i] != "inet" {
				continue
			}
			if p, err := netip.ParsePrefix(f[i+1]); err == nil {
				ps = append(ps, p.Masked())
			}
		}
	}
	return ps
}

// parseRoutePrefixes reads the destinations of `ip -4 route show`, skipping
// default routes.
func parseRoutePrefixes(out string) []netip.Prefix {
	var ps []netip.Prefix
	for _, line := range strings.Split(out, "\n") {
		f := strings.Fields(line)
		if len(f) > 1 && routeTypes[f[0]] {
			f = f[1:]
		}
		if len(f) == 0 || f[0] == "default" {
			continue
		}
		if p, ok := parseDest(f[0]); ok && p.Bits() > 0 {
			ps = append(ps, p)
		}
	}
	return ps
}

// parseDest parses "A/N" or a bare address (as a /32).
func parseDest(s string) (netip.Prefix, bool) {
	if strings.Contains(s, "/") {
		p, err := netip.ParsePrefix(s)
		return p.Masked(), err == nil
	}
	a, err := netip.ParseAddr(s)
	if err != nil || !a.Is4() {
		return netip.Prefix{}, false
	}
	return netip.PrefixFrom(a, 32), true
}

// pickSubnet returns the first /24 of subnetBases, starting at third octet
// start, that overlaps none of used.
func pickSubnet(used []netip.Prefix, start int) (netip.Prefix, error) {
	for _, base := range subnetBases {
		b := base.Addr().As4()
		for k := range 256 {
			b[2] = byte((start + k) % 256)
			cand := netip.PrefixFrom(netip.AddrFrom4(b), 24)
			if !overlapsAny(cand, used) {
				return cand, nil
			}
		}
	}
	return netip.Prefix{}, fmt.Errorf("%w: every /24 of %v is in use", ErrNoSubnet, subnetBases)
}

func overlapsAny(p netip.Prefix, used []netip.Prefix) bool {
	for _, u := range used {
		if p.Overlaps(u) {
			return true
		}
	}
	return false
}

// nthAddr returns the address at offset n in subnet p (n < 256).
func nthAddr(p netip.Prefix, n int) netip.Addr {
	b := p.Addr().As4()
	b[3] = byte(n)
	return netip.AddrFrom4(b)
}
