package clustertest

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"runtime"
	"strings"
)

// addBridge creates the run's bridge with the gateway address and installs
// the fence. STP stays off so a port forwards as soon as its link is up.
func (c *Cluster) addBridge(ctx context.Context) error {
	br := bridgeName(c.id)
	gw := fmt.Sprintf("%s/%d", c.gateway, c.subnet.Bits())
	steps := [][]string{
		{"link", "add", "name", br, "type", "bridge", "stp_state", "0"},
		{"addr", "add", gw, "dev", br},
		{"link", "set", br, "up"},
	}
	for _, s := range steps {
		if err := ipCmd(ctx, s...); err != nil {
			return err
		}
	}
	return c.fence.install(ctx)
}

// addHost creates host i: its namespace, a veth pair whose outer end joins
// the bridge and whose inner end is eth0, the address and loopback.
func (c *Cluster) addHost(ctx context.Context, i int) error {
	h := &Host{
		Name:  hostName(i),
		NetNS: nsName(c.id, i),
		Addr:  nthAddr(c.subnet, 10+i).String(),
		Index: i,
		c:     c,
		veth:  vethName(c.id, i),
	}
	c.hosts = append(c.hosts, h)
	addr := fmt.Sprintf("%s/%d", h.Addr, c.subnet.Bits())
	steps := [][]string{
		{"netns", "add", h.NetNS},
		{"link", "add", h.veth, "type", "veth", "peer", "name", "eth0", "netns", h.NetNS},
		{"link", "set", h.veth, "master", bridgeName(c.id)},
		{"link", "set", h.veth, "up"},
		{"-n", h.NetNS, "link", "set", "lo", "up"},
		{"-n", h.NetNS, "addr", "add", addr, "dev", "eth0"},
		{"-n", h.NetNS, "link", "set", "eth0", "up"},
	}
	for _, s := range steps {
		if err := ipCmd(ctx, s...); err != nil {
			return fmt.Errorf("host %s: %w", h.Name, err)
		}
	}
	return nil
}

// Close kills every process and removes the namespaces, veths, bridge and
// fence of the cluster. It is idempotent; New's cleanup calls it.
func (c *Cluster) Close() error {
	c.mu.Lock()
	if c.closed {
		c.mu.Unlock()
		return nil
	}
	c.closed = true
	c.mu.Unlock()
	ctx := context.Background()
	err := errors.Join(c.stopAll(ctx), c.teardown(ctx))
	if err == nil {
		err = c.checkGone(ctx)
	}
	c.lock.release()
	return err
}

// cleanup is the t.Cleanup of New: it prints the logs when the test failed
// or panicked (after killing the processes, so the logs are complete) and
// tears down.
func (c *Cluster) cleanup() {
	stopErr := c.stopAll(context.Background())
	if c.t.Failed() || panicking() {
		c.dumpLogs()
	}
	if err := errors.Join(stopErr, c.Close()); err != nil {
		c.t.Errorf("clustertest: teardown of run %s: %v", c.id, err)
	}
}

// panicking reports whether the calling goroutine is unwinding a panic.
// The testing package runs cleanups of a panicking test before it marks
// the test failed, so t.Failed() alone would not print the logs then.
func panicking() bool {
	buf := make([]byte, 64<<10)
	buf = buf[:runtime.Stack(buf, false)]
	return bytes.Contains(buf, []byte("\npanic("))
}

// teardown deletes the veths first (synchronously, with their peers), then
// the namespaces, the bridge and the fence rules.
func (c *Cluster) teardown(ctx context.Context) error {
	links, err := listLinks(ctx)
	if err != nil {
		return err
	}
	present := toSet(links)
	var errs []error
	for _, h := range c.hosts {
		errs = append(errs, deleteLink(ctx, h.veth, present))
	}
	for _, h := range c.hosts {
		errs = append(errs, deleteNetns(ctx, h.NetNS))
	}
	errs = append(errs, deleteLink(ctx, bridgeName(c.id), present), c.fence.remove(ctx))
	return errors.Join(errs...)
}

// checkGone fails when any namespace or link of the run remains.
func (c *Cluster) checkGone(ctx context.Context) error {
	left, err := runResources(ctx, c.id)
	if err != nil {
		return err
	}
	if len(left) > 0 {
		return fmt.Errorf("%w: %s", ErrLeftover, strings.Join(left, ", "))
	}
	return nil
}

// runResources lists the namespaces and root-namespace links of run id.
func runResources(ctx context.Context, id string) ([]string, error) {
	nss, err := listNetns()
	if err != nil {
		return nil, err
	}
	links, err := listLinks(ctx)
	if err != nil {
		return nil, err
	}
	var left []string
	for _, n := range nss {
		if r, ok := runOfNetns(n); ok && r == id {
			left = append(left, "netns "+n)
		}
	}
	for _, l := range links {
		if r, ok := runOfLink(l); ok && r == id {
			left = append(left, "link "+l)
		}
	}
	return left, nil
}
