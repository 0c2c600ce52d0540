package state

import (
	"fmt"
	"slices"

	"github.com/troupe-dev/troupe/messages"
)

// holdings are what an allocation holds on its node besides CPU, memory
// and disk: host ports (the networks' reserved and dynamic ports), device
// instances (by ID) and reserved cores.
type holdings struct {
	ports   []int32
	devices []string
	cores   []uint32
}

func allocHoldings(a *messages.Allocation) holdings {
	var h holdings
	h.ports = slices.AppendSeq(h.ports, a.HostPorts())
	for _, t := range a.GetAllocatedResources().GetTasks() {
		for _, d := range t.GetDevices() {
			h.devices = append(h.devices, d.GetDeviceIDs()...)
		}
		h.cores = append(h.cores, t.GetCpu().GetReservedCores()...)
	}
	return h
}

// minus is h without the ports and devices that o holds too.
func (h holdings) minus(o holdings) holdings {
	var out holdings
	for _, p := range h.ports {
		if !slices.Contains(o.ports, p) {
			out.ports = append(out.ports, p)
		}
	}
	for _, d := range h.devices {
		if !slices.Contains(o.devices, d) {
			out.devices = append(out.devices, d)
		}
	}
	for _, c := range h.cores {
		if !slices.Contains(o.cores, c) {
			out.cores = append(out.cores, c)
		}
	}
	return out
}

// conflicts re-checks a placement's host ports, device instances and cores on
// node n, as the store has it now: each device must be a healthy
// instance of n, and no other live allocation on n (this plan's earlier
// placements included) may hold one of its ports, devices or cores. The
// scheduler plans one evaluation at a time against committed state, so a
// conflict means its view was stale (a GPU turned unhealthy meanwhile,
// say); the placement is refused rather than handed out twice. held is
// the live allocation that a is an in-place update of (nil: none): what
// it holds already is not checked again, nor is what ev evicts.
func (w *writeTxn) conflicts(a, held *messages.Allocation, n *messages.Node, ev *evictions) error {
	want := allocHoldings(a)
	if held != nil {
		want = want.minus(allocHoldings(held))
	}
	if len(want.ports) == 0 && len(want.devices) == 0 && len(want.cores) == 0 {
		return nil
	}
	if err := checkCores(want.cores, n); err != nil {
		return err
	}
	if len(want.devices) > 0 {
		healthy := map[string]bool{}
		for _, g := range n.GetNodeResources().GetDevices() {
			for _, in := range g.GetInstances() {
				healthy[in.GetID()] = in.GetHealthy()
			}
		}
		for _, id := range want.devices {
			if !healthy[id] {
				return fmt.Errorf("%w: device %s is not a healthy instance of node %s", ErrPlacementRefused, id, n.ID)
			}
		}
	}
	ports, devices, cores := map[int32]string{}, map[string]string{}, map[uint32]string{}
	for _, o := range w.read().AllocsByNode(n.ID) {
		if o.ID == a.ID || o.TerminalStatus() || ev.has(o.ID) {
			continue
		}
		h := allocHoldings(o)
		for _, p := range h.ports {
			ports[p] = o.ID
		}
		for _, d := range h.devices {
			devices[d] = o.ID
		}
		for _, c := range h.cores {
			cores[c] = o.ID
		}
	}
	for _, p := range want.ports {
		if holder, ok := ports[p]; ok {
			return fmt.Errorf("%w: port %d on node %s is held by allocation %s", ErrPlacementRefused, p, n.ID, holder)
		}
	}
	for _, d := range want.devices {
		if holder, ok := devices[d]; ok {
			return fmt.Errorf("%w: device %s on node %s is held by allocation %s", ErrPlacementRefused, d, n.ID, holder)
		}
	}
	for _, c := range want.cores {
		if holder, ok := cores[c]; ok {
			return fmt.Errorf("%w: core %d on node %s is held by allocation %s", ErrPlacementRefused, c, n.ID, holder)
		}
	}
	return nil
}

// checkCores refuses cores that node n cannot reserve, or that the
// placement itself names twice (two of its tasks on one core).
func checkCores(want []uint32, n *messages.Node) error {
	if len(want) == 0 {
		return nil
	}
	reservable := n.ReservableCores()
	for i, c := range want {
		if !slices.Contains(reservable, c) {
			return fmt.Errorf("%w: core %d is not reservable on node %s", ErrPlacementRefused, c, n.ID)
		}
		if slices.Contains(want[:i], c) {
			return fmt.Errorf("%w: core %d on node %s is reserved twice by the placement", ErrPlacementRefused, c, n.ID)
		}
	}
	return nil
}
