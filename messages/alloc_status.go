package messages

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
