package node

import (
	"runtime"

	"golang.org/x/sys/unix"
)

// reservableCores is the CPUs the agent may run on (its affinity, which
// the kernel keeps within the cpuset of the agent's cgroup), the lowest
// first: the cores the scheduler may reserve for tasks on this node.
func reservableCores() []uint32 {
	var set unix.CPUSet
	if err := unix.SchedGetaffinity(0, &set); err != nil || set.Count() == 0 {
		return allCores(runtime.NumCPU())
	}
	out := make([]uint32, 0, set.Count())
	for i := 0; len(out) < set.Count() && i < len(set)*64; i++ {
		if set.IsSet(i) {
			out = append(out, uint32(i))
		}
	}
	return out
}
