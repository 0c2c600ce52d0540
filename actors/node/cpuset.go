package node

import (
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/troupe-dev/troupe/messages"
)

// allCores is cores 0 to n-1.
func allCores(n int) []uint32 {
	out := make([]uint32, max(n, 0))
	for i := range out {
		out[i] = uint32(i)
	}
	return out
}

// withoutCores takes the cores the client reserves (Nomad's client
// reserved { cores }) out of the node's reservable cores.
func withoutCores(n *messages.Node, reserved []uint32) {
	cpu := n.GetNodeResources().GetCpu()
	if cpu == nil || len(reserved) == 0 {
		return
	}
	cpu.ReservableCpuCores = slices.DeleteFunc(slices.Clone(cpu.ReservableCpuCores),
		func(c uint32) bool { return slices.Contains(reserved, c) })
}

// ParseCores reads a kernel CPU list ("0-1,4") as core IDs, sorted.
func ParseCores(s string) ([]uint32, error) {
	var out []uint32
	for _, part := range strings.Split(s, ",") {
		part = strings.TrimSpace(part)
		if part == "" {
			continue
		}
		lo, hi, isRange := strings.Cut(part, "-")
		a, err := strconv.ParseUint(lo, 10, 16)
		b := a
		if err == nil && isRange {
			b, err = strconv.ParseUint(hi, 10, 16)
		}
		if err != nil || b < a {
			return nil, fmt.Errorf("%w: %q is not a CPU list such as 0-1,4", ErrBadCores, s)
		}
		for i := a; i <= b; i++ {
			out = append(out, uint32(i))
		}
	}
	slices.Sort(out)
	return slices.Compact(out), nil
}
