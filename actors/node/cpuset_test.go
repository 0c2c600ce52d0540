package node

import (
	"bufio"
	"context"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/troupe-dev/troupe/messages"
)

// TestFingerprintReservableCores: the node's reservable cores are the
// CPUs the agent may run on, as the kernel lists them for this process
// (Cpus_allowed_list), and an agent's own node keeps what it was given.
func TestFingerprintReservableCores(t *testing.T) {
	n := &messages.Node{}
	Fingerprint(context.Background(), n, nil, time.Now())
	require.Equal(t, allowedCPUs(t), n.NodeResources.Cpu.ReservableCpuCores)
	require.Equal(t, int32(len(n.NodeResources.Cpu.ReservableCpuCores)), n.NodeResources.Cpu.TotalCpuCores)

	given := &messages.Node{NodeResources: &messages.NodeResources{Cpu: &messages.NodeCpuResources{
		CpuShares: 1000, TotalCpuCores: 1, ReservableCpuCores: []uint32{7}}}}
	Fingerprint(context.Background(), given, nil, time.Now())
	require.Equal(t, []uint32{7}, given.NodeResources.Cpu.ReservableCpuCores)
}

// allowedCPUs reads Cpus_allowed_list of /proc/self/status ("0-3,8").
func allowedCPUs(t *testing.T) []uint32 {
	f, err := os.Open("/proc/self/status")
	require.NoError(t, err)
	defer f.Close()
	s := bufio.NewScanner(f)
	for s.Scan() {
		v, ok := strings.CutPrefix(s.Text(), "Cpus_allowed_list:")
		if !ok {
			continue
		}
		var out []uint32
		for _, part := range strings.Split(strings.TrimSpace(v), ",") {
			lo, hi, isRange := strings.Cut(part, "-")
			a, err := strconv.Atoi(lo)
			require.NoError(t, err)
			b := a
			if isRange {
				b, err = strconv.Atoi(hi)
				require.NoError(t, err)
			}
			for i := a; i <= b; i++ {
				out = append(out, uint32(i))
			}
		}
		return out
	}
	t.Fatal("no Cpus_allowed_list in /proc/self/status")
	return nil
}
