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

// TestParseCoresAndReserved: a CPU list reads as sorted core IDs (bad
// ones are refused), and the client's reserved cores leave the node's
// reservable ones.
func TestParseCoresAndReserved(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want []uint32
		bad  bool
	}{
		{"", nil, false},
		{"0-1", []uint32{0, 1}, false},
		{"4, 0-1,1", []uint32{0, 1, 4}, false},
		{"2-1", nil, true},
		{"x", nil, true},
		{"-1", nil, true},
	} {
		got, err := ParseCores(tc.in)
		if tc.bad {
			require.ErrorIs(t, err, ErrBadCores, tc.in)
			continue
		}
		require.NoError(t, err, tc.in)
		require.Equal(t, tc.want, got, tc.in)
	}
	n := &messages.Node{NodeResources: &messages.NodeResources{Cpu: &messages.NodeCpuResources{
		ReservableCpuCores: []uint32{0, 1, 2, 3}}}}
	withoutCores(n, []uint32{0, 2, 9})
	require.Equal(t, []uint32{1, 3}, n.NodeResources.Cpu.ReservableCpuCores)
}
