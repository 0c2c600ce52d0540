//go:build linux

package cni

import (
	"bytes"
	"context"
	"encoding/binary"
	"fmt"
	"net"
	"net/netip"
	"os"
	"regexp"
	"strings"
	"time"
)

// Helpers that look at and restore the host: iptables, routes, chains.

// sharedChainsNow returns the shared CNI chains that exist now, per table.
func sharedChainsNow() map[string]bool {
	have := map[string]bool{}
	if os.Geteuid() != 0 {
		return have
	}
	for _, name := range sweptTables {
		t, err := saveTable(context.Background(), name)
		if err != nil {
			continue
		}
		for c := range t.chains {
			have[name+"/"+c] = true
		}
	}
	return have
}

// removeSharedChains removes the shared CNI chains that the tests created
// (those not in before), with the rules that jump to them.
func removeSharedChains(before map[string]bool) error {
	if os.Geteuid() != 0 {
		return nil
	}
	for _, name := range sweptTables {
		t, err := saveTable(context.Background(), name)
		if err != nil {
			return err
		}
		made := map[string]bool{}
		for c := range t.chains {
			if sharedChains[c] && !before[name+"/"+c] {
				made[c] = true
			}
		}
		var script bytes.Buffer
		for _, r := range t.rules {
			if made[r.target()] && !made[r.chain] {
				fmt.Fprintf(&script, "-D %s %s\n", r.chain, r.spec)
			}
		}
		for c := range made {
			fmt.Fprintf(&script, "-F %s\n", c)
		}
		for c := range made {
			fmt.Fprintf(&script, "-X %s\n", c)
		}
		if script.Len() == 0 {
			continue
		}
		in := "*" + name + "\n" + script.String() + "COMMIT\n"
		if _, err := runTool(context.Background(), strings.NewReader(in), "iptables-restore", "-w", "--noflush"); err != nil {
			return err
		}
	}
	return nil
}

var countersRE = regexp.MustCompile(`\[\d+:\d+\]`)

// iptablesState is iptables-save's output without comments, counters and
// chain declarations, and only the rules of this package's test networks
// (named trt<hex>, in 10.99.0.0/16) or of no network at all (the shared
// CNI chains): other packages' tests may add rules for their own networks
// (and test/e2e its bridge fences) at the same time.
func iptablesState() (string, error) {
	out, err := runTool(context.Background(), nil, "iptables-save")
	if err != nil {
		return "", err
	}
	var keep []string
	for _, line := range strings.Split(out, "\n") {
		if strings.HasPrefix(line, "#") || strings.HasPrefix(line, ":") {
			continue
		}
		ours := strings.Contains(line, "10.99.") || strings.Contains(line, `name: \"trt`)
		shared := !anyIPv4RE.MatchString(line) && !strings.Contains(line, "name: ") &&
			(strings.Contains(line, "CNI") || strings.HasPrefix(line, "*") || line == "COMMIT")
		if ours || shared {
			keep = append(keep, countersRE.ReplaceAllString(line, "[0:0]"))
		}
	}
	return strings.Join(keep, "\n"), nil
}

var anyIPv4RE = regexp.MustCompile(`\b\d+\.\d+\.\d+\.\d+\b`)

// rulesMentioning returns the iptables-save lines that name the
// allocation or one of its addresses.
func rulesMentioning(id string, ips ...netip.Addr) ([]string, error) {
	state, err := iptablesState()
	if err != nil {
		return nil, err
	}
	var hits []string
	for _, line := range strings.Split(state, "\n") {
		l := line + " "
		hit := strings.Contains(l, id)
		for _, ip := range ips {
			hit = hit || strings.Contains(l, " "+ip.String()+"/32 ") || strings.Contains(l, ip.String()+":")
		}
		if hit {
			hits = append(hits, line)
		}
	}
	return hits, nil
}

// freeSubnet returns a /24 in 10.99.0.0/16 that no address or route of
// the host overlaps.
func freeSubnet() (netip.Prefix, error) {
	var used []netip.Prefix
	addrs, err := net.InterfaceAddrs()
	if err != nil {
		return netip.Prefix{}, err
	}
	for _, a := range addrs {
		if p, err := netip.ParsePrefix(a.String()); err == nil {
			used = append(used, p.Masked())
		}
	}
	used = append(used, routes()...)
	for i := range 256 {
		cand := netip.PrefixFrom(netip.AddrFrom4([4]byte{10, 99, byte(i), 0}), 24)
		free := true
		for _, u := range used {
			if u.Bits() > 0 && u.Overlaps(cand) {
				free = false
			}
		}
		if free {
			return cand, nil
		}
	}
	return netip.Prefix{}, fmt.Errorf("no free /24 in 10.99.0.0/16")
}

// routes reads the IPv4 routes of /proc/net/route (the default excluded).
func routes() []netip.Prefix {
	data, err := os.ReadFile("/proc/net/route")
	if err != nil {
		return nil
	}
	var out []netip.Prefix
	for _, line := range strings.Split(string(data), "\n")[1:] {
		f := strings.Fields(line)
		if len(f) < 8 {
			continue
		}
		var dst, mask uint32
		if _, err := fmt.Sscanf(f[1]+" "+f[7], "%x %x", &dst, &mask); err != nil {
			continue
		}
		var d, m [4]byte
		binary.LittleEndian.PutUint32(d[:], dst)
		binary.LittleEndian.PutUint32(m[:], mask)
		ones, _ := net.IPMask(m[:]).Size()
		out = append(out, netip.PrefixFrom(netip.AddrFrom4(d), ones))
	}
	return out
}

// hostIPv4 is a non-loopback IPv4 address of the host outside subnet, if
// there is one.
func hostIPv4(subnet netip.Prefix) (netip.Addr, bool) {
	addrs, _ := net.InterfaceAddrs()
	for _, a := range addrs {
		p, err := netip.ParsePrefix(a.String())
		if err == nil && p.Addr().Is4() && !p.Addr().IsLoopback() && !subnet.Contains(p.Addr()) {
			return p.Addr(), true
		}
	}
	return netip.Addr{}, false
}

// freePort is a TCP port that nothing on the host uses now.
func freePort() (int, error) {
	l, err := net.Listen("tcp4", "0.0.0.0:0")
	if err != nil {
		return 0, err
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}

// testTimeout bounds every network call of the tests.
const testTimeout = 30 * time.Second
