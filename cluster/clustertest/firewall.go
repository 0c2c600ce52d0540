package clustertest

import (
	"context"
	"errors"
	"os/exec"
	"strings"
)

// fence is the set of iptables FORWARD rules that keep a run's bridge to
// itself: traffic between its ports is accepted (hosts with Docker set the
// FORWARD policy to DROP, which br_netfilter applies to bridged frames), and
// anything routed on or off the bridge is dropped. A nil fence (no iptables
// on the machine) does nothing: the hosts then rely on having only their
// subnet route, and ip_forward is left as it is.
type fence struct {
	rules [][]string
}

// newFence returns the fence of a run, or nil when iptables is missing.
func newFence(id string) *fence {
	if _, err := exec.LookPath("iptables"); err != nil {
		return nil
	}
	return &fence{rules: fenceRules(bridgeName(id), fenceComment(id))}
}

// fenceRules returns the FORWARD rule specs, in the order they must end up.
func fenceRules(br, comment string) [][]string {
	tag := []string{"-m", "comment", "--comment", comment}
	return [][]string{
		append([]string{"-i", br, "-o", br}, append(tag, "-j", "ACCEPT")...),
		append([]string{"-i", br}, append(tag, "-j", "DROP")...),
		append([]string{"-o", br}, append(tag, "-j", "DROP")...),
	}
}

// install inserts the rules at the top of FORWARD, last first, so that
// they end up in fenceRules order.
func (f *fence) install(ctx context.Context) error {
	if f == nil {
		return nil
	}
	for i := len(f.rules) - 1; i >= 0; i-- {
		args := append([]string{"-w", "5", "-I", "FORWARD"}, f.rules[i]...)
		if _, err := run(ctx, "iptables", args...); err != nil {
			return err
		}
	}
	return nil
}

// remove deletes the rules that are present.
func (f *fence) remove(ctx context.Context) error {
	if f == nil {
		return nil
	}
	var errs []error
	for _, r := range f.rules {
		check := append([]string{"-w", "5", "-C", "FORWARD"}, r...)
		if _, err := run(ctx, "iptables", check...); err != nil {
			continue // not present
		}
		del := append([]string{"-w", "5", "-D", "FORWARD"}, r...)
		if _, err := run(ctx, "iptables", del...); err != nil {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}

// listFenceRules returns the `iptables -S FORWARD` output, or "" when
// iptables is missing.
func listFenceRules(ctx context.Context) (string, error) {
	if _, err := exec.LookPath("iptables"); err != nil {
		return "", nil
	}
	out, err := run(ctx, "iptables", "-w", "5", "-S", "FORWARD")
	return string(out), err
}

// parseFenceRules returns, per run id, the delete commands (arguments after
// "iptables") of the fence rules found in an `iptables -S FORWARD` listing.
func parseFenceRules(listing string) map[string][][]string {
	out := map[string][][]string{}
	for _, line := range strings.Split(listing, "\n") {
		f := strings.Fields(line)
		if len(f) < 2 || f[0] != "-A" || f[1] != "FORWARD" {
			continue
		}
		for i := 0; i+1 < len(f); i++ {
			if f[i] != "--comment" {
				continue
			}
			id, ok := runOfComment(strings.Trim(f[i+1], `"`))
			if !ok {
				continue
			}
			del := append([]string{"-w", "5", "-D"}, f[1:]...)
			out[id] = append(out[id], del)
		}
	}
	return out
}
