package clustertest

import (
	"context"
	"strconv"
	"strings"
)

// Crash is the host losing power: its link goes down first (nothing more
// leaves it, not even a TCP reset), then every process in its network
// namespace is SIGKILLed (agents, their tasks, everything Start or a
// started process launched there). The namespace itself stays until the
// cluster's cleanup. Procs of the host report exited once they are reaped.
func (h *Host) Crash() error {
	if err := h.Partition(); err != nil {
		return err
	}
	return killNetnsPids(context.Background(), h.NetNS)
}

// Pids lists the processes in the host's network namespace, as the root
// pid namespace numbers them.
func (h *Host) Pids(ctx context.Context) ([]int, error) {
	if h.c.isClosed() {
		return nil, ErrClosed
	}
	return netnsPids(ctx, h.NetNS)
}

// netnsPids lists the processes in network namespace ns.
func netnsPids(ctx context.Context, ns string) ([]int, error) {
	out, err := run(ctx, "ip", "netns", "pids", ns)
	if err != nil {
		return nil, err
	}
	var pids []int
	for _, f := range strings.Fields(string(out)) {
		if pid, err := strconv.Atoi(f); err == nil {
			pids = append(pids, pid)
		}
	}
	return pids, nil
}
