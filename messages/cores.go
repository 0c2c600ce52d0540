package messages

// ReservableCores is the core IDs the scheduler may reserve on the node:
// those it reports in NodeResources.Cpu.ReservableCpuCores, or, for a node
// that reports none (an agent older than the field), 0 to TotalCpuCores-1.
// The result may be the node's own slice: callers must not modify it.
func (n *Node) ReservableCores() []uint32 {
	cpu := n.GetNodeResources().GetCpu()
	if cores := cpu.GetReservableCpuCores(); len(cores) > 0 {
		return cores
	}
	out := make([]uint32, max(cpu.GetTotalCpuCores(), 0))
	for i := range out {
		out[i] = uint32(i)
	}
	return out
}

// SharesPerCore is the MHz one of the node's cores counts for: a task that
// reserves N cores holds N times it of the node's CPU, as in Nomad.
func (n *Node) SharesPerCore() int64 {
	cpu := n.GetNodeResources().GetCpu()
	if cpu.GetTotalCpuCores() <= 0 {
		return 0
	}
	return cpu.GetCpuShares() / int64(cpu.GetTotalCpuCores())
}
