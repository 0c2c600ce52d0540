package messages

// ClientTerminal reports whether an allocation's client status is final
// (complete, failed or lost): its tasks will not run again.
func ClientTerminal(status string) bool {
	return status == "complete" || status == "failed" || status == "lost"
}

// HostPorts yields the host ports an allocation holds (reserved and
// dynamic, of every network), as the scheduler counts them and the plan
// applier checks them.
func (x *Allocation) HostPorts() func(yield func(int32) bool) {
	return func(yield func(int32) bool) {
		for _, n := range x.GetAllocatedResources().GetShared().GetNetworks() {
			for _, ports := range [][]*Port{n.GetReservedPorts(), n.GetDynamicPorts()} {
				for _, p := range ports {
					if p.GetValue() > 0 && !yield(p.GetValue()) {
						return
					}
				}
			}
		}
	}
}
