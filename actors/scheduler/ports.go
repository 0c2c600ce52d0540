package scheduler

import (
	"math/rand/v2"
	"net"
	"slices"
	"strconv"

	"github.com/troupe-dev/troupe/messages"
	"google.golang.org/protobuf/proto"
)

// Nomad's default dynamic port range, used when neither the node
// (NodeResources.MinDynamicPort/MaxDynamicPort) nor Options set one.
const (
	defaultMinDynamicPort = 20000
	defaultMaxDynamicPort = 32000
	maxRandPortAttempts   = 20 // random picks before scanning the range
)

// Network exhaustion reasons, as Nomad words them. A node that cannot
// take a group's ports is counted in NodesExhausted and in
// DimensionExhausted under dimNetworkPrefix + reason, e.g.
// "network: reserved port collision http=8080".
const (
	dimNetworkPrefix    = "network: "
	reasonPortCollision = "reserved port collision"
	reasonDynamicPorts  = "dynamic port selection failed"
)

// nodeIPAttribute is the node attribute (Nomad's fingerprint name) whose
// value becomes the IP of an allocation's networks; without it the host of
// the node's HTTPAddr is used.
const nodeIPAttribute = "unique.network.ip-address"

// portAsk is what a group's networks ask of a node's ports; nil for a
// group that asks for none, so such groups pay nothing.
type portAsk struct {
	reserved []*messages.Port // the static ports, over all the group's networks
	keys     []string         // DimensionExhausted key of each reserved port's collision
	dynamic  int32            // how many dynamic ports
}

func newPortAsk(tg *messages.TaskGroup) *portAsk {
	if len(tg.Networks) == 0 {
		return nil
	}
	ask := &portAsk{}
	for _, n := range tg.Networks {
		for _, p := range n.GetReservedPorts() {
			ask.reserved = append(ask.reserved, p)
			ask.keys = append(ask.keys, dimNetworkPrefix+reasonPortCollision+" "+
				p.Label+"="+strconv.Itoa(int(p.Value)))
		}
		ask.dynamic += int32(len(n.GetDynamicPorts()))
	}
	if len(ask.reserved) == 0 && ask.dynamic == 0 {
		return nil
	}
	return ask
}

// nodePorts is the set of host ports the live allocs on a pool node hold,
// with this plan's placements and stops applied.
type nodePorts struct {
	used     map[int32]int32 // port -> live allocs holding it; nil until one is
	min, max int32           // the node's dynamic range
	inRange  int32           // distinct used ports within [min, max]
}

func (np *nodePorts) add(port, sign int32) {
	if port <= 0 {
		return
	}
	prev := np.used[port]
	c := max(prev+sign, 0)
	if c > 0 {
		if np.used == nil {
			np.used = map[int32]int32{}
		}
		np.used[port] = c
	} else {
		delete(np.used, port)
	}
	if port >= np.min && port <= np.max {
		switch {
		case prev == 0 && c > 0:
			np.inRange++
		case prev > 0 && c == 0:
			np.inRange--
		}
	}
}

// addAlloc adds (sign 1) or removes (-1) the ports an alloc holds.
func (np *nodePorts) addAlloc(a *messages.Allocation, sign int32) {
	for p := range a.HostPorts() {
		np.add(p, sign)
	}
}

// dynamicRange is node n's dynamic port range: the node's own, else the
// options', else Nomad's default.
func (p *planner) dynamicRange(n *messages.Node) (int32, int32) {
	nr := n.GetNodeResources()
	if lo, hi := nr.GetMinDynamicPort(), nr.GetMaxDynamicPort(); lo > 0 && hi > 0 {
		return lo, hi
	}
	lo, hi := p.opts.MinDynamicPort, p.opts.MaxDynamicPort
	if lo <= 0 {
		lo = defaultMinDynamicPort
	}
	if hi <= 0 {
		hi = defaultMaxDynamicPort
	}
	return lo, hi
}

// nodePorts returns the ports used on pool node idx, reading the node's
// allocs from the snapshot on first use. Allocs this plan stops are left
// out; later stops and placements are applied as they happen (addUsage,
// placeAt).
func (p *planner) nodePorts(idx int) *nodePorts {
	if np := p.ports[idx]; np != nil {
		return np
	}
	n := p.pool[idx]
	lo, hi := p.dynamicRange(n)
	np := &nodePorts{min: lo, max: hi}
	for _, a := range p.nodeAllocs(n.ID) {
		if !a.TerminalStatus() && !p.stopped[a.ID] {
			np.addAlloc(a, 1)
		}
	}
	p.ports[idx] = np
	return np
}

// portsReason returns the DimensionExhausted key saying why pool node idx
// cannot take gs's ports, or "" when it can: a static port that a live
// alloc (or one placed earlier in this plan) holds, or fewer free ports in
// the dynamic range than the group asks for.
func (p *planner) portsReason(gs *groupState, idx int) string {
	ask := gs.ports
	np := p.nodePorts(idx)
	own := int32(0) // the group's static ports within the dynamic range
	for i, port := range ask.reserved {
		if np.used[port.Value] > 0 {
			return ask.keys[i]
		}
		if port.Value >= np.min && port.Value <= np.max {
			own++
		}
	}
	if ask.dynamic > 0 && np.max-np.min+1-np.inRange-own < ask.dynamic {
		return dimNetworkPrefix + reasonDynamicPorts
	}
	return ""
}

// allocNetworks copies the group's networks for an alloc on pool node
// idx: the node's IP, static ports as asked, and each dynamic port given a
// free port of the node's dynamic range, chosen with opts.Rand. A port's
// To of -1 becomes its host port, as in Nomad; other values are kept (0:
// the runtime maps the host port to itself).
func (p *planner) allocNetworks(gs *groupState, idx int) []*messages.NetworkResource {
	ip := nodeIP(p.pool[idx])
	out := make([]*messages.NetworkResource, len(gs.tg.Networks))
	var taken []int32 // ports given in this offer
	for i, n := range gs.tg.Networks {
		c := proto.Clone(n).(*messages.NetworkResource)
		if c.IP == "" {
			c.IP = ip
		}
		for _, rp := range c.ReservedPorts {
			taken = append(taken, rp.Value)
			mapToHost(rp)
		}
		out[i] = c
	}
	if gs.ports == nil || gs.ports.dynamic == 0 {
		return out
	}
	np := p.nodePorts(idx)
	for _, c := range out {
		for _, dp := range c.DynamicPorts {
			dp.Value = np.pick(p.opts.Rand, taken)
			taken = append(taken, dp.Value)
			mapToHost(dp)
		}
	}
	return out
}

func mapToHost(port *messages.Port) {
	if port.To == -1 {
		port.To = port.Value
	}
}

// pick chooses a free dynamic port not in taken: a few random tries, as
// Nomad's stochastic selection does, then a random one of those left. It
// returns 0 when none is free (portsReason rules that out).
func (np *nodePorts) pick(r *rand.Rand, taken []int32) int32 {
	span := np.max - np.min + 1
	if span <= 0 {
		return 0
	}
	free := func(v int32) bool { return np.used[v] == 0 && !slices.Contains(taken, v) }
	for range maxRandPortAttempts {
		if v := np.min + r.Int32N(span); free(v) {
			return v
		}
	}
	var avail []int32
	for v := np.min; v <= np.max; v++ {
		if free(v) {
			avail = append(avail, v)
		}
	}
	if len(avail) == 0 {
		return 0
	}
	return avail[r.IntN(len(avail))]
}

// nodeIP is the address of node n that allocations' ports are on, or "".
func nodeIP(n *messages.Node) string {
	if ip := n.Attributes[nodeIPAttribute]; ip != "" {
		return ip
	}
	host := n.HTTPAddr
	if h, _, err := net.SplitHostPort(host); err == nil {
		host = h
	}
	if ip := net.ParseIP(host); ip != nil && !ip.IsUnspecified() {
		return ip.String()
	}
	return ""
}
