package clustertest

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"syscall"
	"time"
)

// cmdTimeout bounds every setup and teardown command.
const cmdTimeout = 10 * time.Second

// run executes a host command in the root namespace and returns its output.
func run(ctx context.Context, name string, args ...string) ([]byte, error) {
	ctx, cancel := context.WithTimeout(ctx, cmdTimeout)
	defer cancel()
	out, err := exec.CommandContext(ctx, name, args...).CombinedOutput()
	if err != nil {
		return out, fmt.Errorf("%w: %s %s: %w: %s", ErrCommand, name,
			strings.Join(args, " "), err, bytes.TrimSpace(out))
	}
	return out, nil
}

// ipCmd runs ip(8) with args.
func ipCmd(ctx context.Context, args ...string) error {
	_, err := run(ctx, "ip", args...)
	return err
}

// listNetns returns the names of all named network namespaces.
func listNetns() ([]string, error) {
	entries, err := os.ReadDir(netnsDir)
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("clustertest: list netns: %w", err)
	}
	names := make([]string, 0, len(entries))
	for _, e := range entries {
		names = append(names, e.Name())
	}
	return names, nil
}

// listLinks returns the names of all links in the root namespace.
func listLinks(ctx context.Context) ([]string, error) {
	out, err := run(ctx, "ip", "-o", "link", "show")
	if err != nil {
		return nil, err
	}
	return parseLinkNames(string(out)), nil
}

// parseLinkNames extracts names from `ip -o link show` lines such as
// "5: ttab12v0@if2: <BROADCAST,...> ...".
func parseLinkNames(out string) []string {
	var names []string
	for _, line := range strings.Split(out, "\n") {
		f := strings.Fields(line)
		if len(f) < 2 {
			continue
		}
		name, _, _ := strings.Cut(strings.TrimSuffix(f[1], ":"), "@")
		names = append(names, name)
	}
	return names
}

// killNetnsPids SIGKILLs every process inside network namespace ns.
func killNetnsPids(ctx context.Context, ns string) error {
	pids, err := netnsPids(ctx, ns)
	if err != nil {
		return err
	}
	for _, pid := range pids {
		if pid <= 1 {
			continue
		}
		if err := syscall.Kill(pid, syscall.SIGKILL); err != nil && !errors.Is(err, syscall.ESRCH) {
			return fmt.Errorf("clustertest: kill %d in %s: %w", pid, ns, err)
		}
	}
	return nil
}

// deleteNetns kills the processes in ns and deletes it, if it exists.
func deleteNetns(ctx context.Context, ns string) error {
	if _, err := os.Stat(netnsPath(ns)); errors.Is(err, os.ErrNotExist) {
		return nil
	}
	return errors.Join(killNetnsPids(ctx, ns), ipCmd(ctx, "netns", "del", ns))
}

// deleteLink deletes a root-namespace link if it is present. A link that
// vanished meanwhile (a veth dies with its namespace) is not an error.
func deleteLink(ctx context.Context, name string, present map[string]bool) error {
	if !present[name] {
		return nil
	}
	err := ipCmd(ctx, "link", "del", name)
	if err != nil && ipCmd(ctx, "link", "show", name) != nil {
		return nil
	}
	return err
}

// toSet turns names into a membership map.
func toSet(names []string) map[string]bool {
	m := make(map[string]bool, len(names))
	for _, n := range names {
		m[n] = true
	}
	return m
}
