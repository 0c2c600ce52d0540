package cni

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net/netip"
	"os/exec"
	"regexp"
	"strconv"
	"strings"
	"time"
)

// The forced cleanup of iptables: the standard plugins tag their
// per-container rules in two ways, and a sweep finds both in
// iptables-save's output and deletes them with one iptables-restore
// --noflush transaction per table.
//
//   - bridge (ipMasq) and portmap put a comment naming the network and the
//     container ID on their rules, which jump to per-container chains
//     (nat POSTROUTING -> CNI-<hash>, nat CNI-HOSTPORT-DNAT -> CNI-DN-<hash>);
//   - firewall adds untagged rules for the container's address to
//     filter CNI-FORWARD (-s IP/32, -d IP/32).
//
// Chains shared by all containers (sharedChains) are never removed.

// sweptTables are the tables the plugins write to.
var sweptTables = []string{"nat", "filter"}

// sharedChains are created once and used by every container.
var sharedChains = map[string]bool{
	"CNI-HOSTPORT-DNAT": true, "CNI-HOSTPORT-SETMARK": true, "CNI-HOSTPORT-MASQ": true,
	"CNI-FORWARD": true, "CNI-ADMIN": true,
}

// firewallChain is where the firewall plugin puts its per-address rules.
const firewallChain = "CNI-FORWARD"

// rule is one "-A CHAIN ..." line of iptables-save.
type rule struct {
	chain string
	spec  string // everything after the chain, quoted as iptables-save does
}

var (
	targetRE  = regexp.MustCompile(`(?:^| )-[jg] (\S+)`)
	commentRE = regexp.MustCompile(`name: \\"([^"\\]+)\\" id: \\"([^"\\]+)\\"`)
	protoRE   = regexp.MustCompile(`(?:^| )-p (\S+)`)
	dportsRE  = regexp.MustCompile(`--dports? (\S+)`)
)

func (r rule) target() string {
	if m := targetRE.FindStringSubmatch(r.spec); m != nil {
		return m[1]
	}
	return ""
}

// owner returns the network and container ID in the rule's comment.
func (r rule) owner() (network, id string) {
	if m := commentRE.FindStringSubmatch(r.spec); m != nil {
		return m[1], m[2]
	}
	return "", ""
}

// forAddr reports whether the rule matches exactly the address ip as
// source or destination.
func (r rule) forAddr(ip netip.Addr) bool {
	s := " " + r.spec + " "
	return strings.Contains(s, " -s "+ip.String()+"/32 ") || strings.Contains(s, " -d "+ip.String()+"/32 ")
}

// table is one table of iptables-save's output.
type table struct {
	name   string
	chains map[string]bool
	rules  []rule
}

// saveTable runs iptables-save for one table.
func saveTable(ctx context.Context, name string) (*table, error) {
	out, err := runTool(ctx, nil, "iptables-save", "-t", name)
	if err != nil {
		return nil, err
	}
	t := &table{name: name, chains: map[string]bool{}}
	for _, line := range strings.Split(out, "\n") {
		switch {
		case strings.HasPrefix(line, ":"):
			if f := strings.Fields(line[1:]); len(f) > 0 {
				t.chains[f[0]] = true
			}
		case strings.HasPrefix(line, "-A "):
			chain, spec, _ := strings.Cut(line[3:], " ")
			t.rules = append(t.rules, rule{chain: chain, spec: spec})
		}
	}
	return t, nil
}

// sweep deletes, in every swept table, the rules that match and the
// per-container chains they jump to (with their rules and every other rule
// jumping there). It retries when the rules changed under it.
func sweep(ctx context.Context, match func(table string, r rule) bool) error {
	var errs []error
	for _, name := range sweptTables {
		// Someone else changed the table: any error is worth 2 more tries.
		errs = append(errs, retryIptables(ctx, 2, func(error) bool { return true },
			func() error { return sweepTable(ctx, name, match) }, nil))
	}
	return errors.Join(errs...)
}

// retryIptables runs op, and runs it again up to retries more times while
// it fails with an error that retryable accepts (another process's
// iptables change got in the way) and ctx lives, waiting 100 ms, 200 ms,
// 400 ms... before each; onRetry, when not nil, hears of each. It returns
// op's last error, joined with ctx's when ctx ended during a wait.
func retryIptables(ctx context.Context, retries int, retryable func(error) bool, op func() error,
	onRetry func(try int, err error)) error {
	err := op()
	for try := 1; err != nil && try <= retries && ctx.Err() == nil && retryable(err); try++ {
		if onRetry != nil {
			onRetry(try, err)
		}
		select {
		case <-time.After(50 * time.Millisecond << try):
		case <-ctx.Done():
			return errors.Join(ctx.Err(), err)
		}
		err = op()
	}
	return err
}

// transientIptables reports whether err is iptables saying the table was
// busy with someone else's change, or that a chain it had just made was
// missing.
func transientIptables(err error) bool {
	msg := err.Error()
	return strings.Contains(msg, "Device or resource busy") || strings.Contains(msg, "Resource temporarily unavailable") ||
		strings.Contains(msg, "No chain/target/match by that name")
}

func sweepTable(ctx context.Context, name string, match func(table string, r rule) bool) error {
	t, err := saveTable(ctx, name)
	if err != nil {
		return err
	}
	drop := map[string]bool{} // per-container chains to remove
	for _, r := range t.rules {
		if tg := r.target(); match(name, r) && t.chains[tg] && !sharedChains[tg] {
			drop[tg] = true
		}
	}
	var script bytes.Buffer
	for _, r := range t.rules {
		if !drop[r.chain] && (match(name, r) || drop[r.target()]) {
			fmt.Fprintf(&script, "-D %s %s\n", r.chain, r.spec)
		}
	}
	for c := range drop {
		fmt.Fprintf(&script, "-F %s\n-X %s\n", c, c)
	}
	if script.Len() == 0 {
		return nil
	}
	in := "*" + name + "\n" + script.String() + "COMMIT\n"
	_, err = runTool(ctx, strings.NewReader(in), "iptables-restore", "-w", "--noflush")
	return err
}

// mappedPorts returns the host ports that portmap forwards ("8080/tcp"),
// each with the container ID that owns it.
func mappedPorts(ctx context.Context) (map[string]string, error) {
	t, err := saveTable(ctx, "nat")
	if err != nil {
		return nil, err
	}
	ports := map[string]string{}
	for _, r := range t.rules {
		if r.chain != "CNI-HOSTPORT-DNAT" {
			continue
		}
		proto, dports := protoRE.FindStringSubmatch(r.spec), dportsRE.FindStringSubmatch(r.spec)
		if proto == nil || dports == nil {
			continue
		}
		_, id := r.owner()
		for _, p := range strings.Split(dports[1], ",") {
			if _, err := strconv.Atoi(p); err == nil {
				ports[p+"/"+proto[1]] = id
			}
		}
	}
	return ports, nil
}

// runTool runs an iptables tool and returns its stdout.
func runTool(ctx context.Context, stdin *strings.Reader, name string, args ...string) (string, error) {
	path, err := exec.LookPath(name)
	if err != nil {
		path = "/usr/sbin/" + name
	}
	cmd := exec.CommandContext(ctx, path, args...)
	if stdin != nil {
		cmd.Stdin = stdin
	}
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		return "", fmt.Errorf("%s %s: %w: %s", name, strings.Join(args, " "), err,
			strings.TrimSpace(stderr.String()))
	}
	return stdout.String(), nil
}
