package agent

import (
	"fmt"
	"net"
	"slices"
	"strconv"
	"time"

	"github.com/troupe-dev/troupe/actors/node"
	"github.com/troupe-dev/troupe/api"
	"github.com/troupe-dev/troupe/cluster/membership"
)

// The WAN pool (federation): every server of every region is also a member
// of a second memberlist, servers only, on Config.WANPort. Its metadata
// names each server's region, RPC and HTTP addresses and whether it leads
// its region, which is all another region needs to forward a request to it
// (federation_forward.go).

// DefaultWANPort is the WAN pool's port: the one after raft's in troupe's
// scheme (HTTP 4646, RPC 4647, LAN gossip 4648, raft 4649). Nomad gossips
// its servers' WAN pool on 4648, where troupe's LAN pool is.
const DefaultWANPort = 4650

// startWAN starts this server's WAN member and joins Config.RetryJoin.
func (a *Agent) startWAN() error {
	meta := a.wanMeta(a.raft.IsLeader())
	m, err := a.newGossipPool(membership.Config{Name: meta.NodeName + "." + a.cfg.Region, BindAddr: a.cfg.BindAddr,
		BindPort: a.cfg.WANPort, Meta: meta, Logger: a.log.With("pool", "wan"), WAN: true})
	if err != nil {
		return err
	}
	reconnect := wanReconnectInterval
	if d := a.cfg.GossipInterval; d > 0 {
		reconnect = 20 * d
	}
	a.wan = m
	a.wg.Add(1)
	go a.joinLoop(m, "wan", a.cfg.RetryJoin)
	a.wg.Add(2)
	go a.everyUntilStop(250*time.Millisecond, a.wanLeaderGossip())
	go a.everyUntilStop(reconnect, a.reconnectWAN)
	return nil
}

// wanReconnectInterval is how often a server tries again the WAN members
// it saw fail (Serf's reconnect_interval): memberlist alone never talks
// to a failed member again, so after a cut between regions heals the
// regions would stay apart.
const wanReconnectInterval = 30 * time.Second

// reconnectWAN joins the failed WAN members again (they are forgotten
// after membership's ReapAfter); run by everyUntilStop.
func (a *Agent) reconnectWAN() {
	var failed []string
	for _, m := range a.wan.Members() {
		if m.Status == membership.StatusFailed {
			failed = append(failed, m.GossipAddr())
		}
	}
	if len(failed) == 0 {
		return
	}
	if n, err := a.wan.Join(failed); n > 0 {
		a.log.Info("rejoined failed WAN members", "contacted", n)
	} else {
		a.log.Debug("failed WAN members still unreachable", "members", failed, "error", err)
	}
}

// wanFloodInterval is how often a server looks for peers of its region in
// the WAN pool that it is not in (floodWAN).
const wanFloodInterval = time.Second

// floodWAN joins, through their WAN addresses, this region's servers
// (seen in the LAN pool) that are not alive in this server's WAN pool, as
// Nomad's servers flood-join: one server of a region joined to another
// region brings in every server of both, so that any server answers for
// any region. Run by everyUntilStop; it does nothing once all are in.
func (a *Agent) floodWAN() {
	if a.wan == nil || a.members == nil {
		return
	}
	in := map[string]bool{}
	for _, m := range a.wan.Members() {
		if m.Status == membership.StatusAlive {
			in[m.GossipAddr()] = true
		}
	}
	self := a.wanAddr // read once at start: memberlist's local node changes under Leave
	var join []string
	for _, m := range a.members.Servers() {
		if w := m.Meta.WANAddr; w != "" && w != self && m.Status == membership.StatusAlive &&
			m.Meta.Region == a.cfg.Region && !in[w] {
			join = append(join, w)
		}
	}
	if len(join) == 0 {
		return
	}
	if n, err := a.wan.Join(join); n > 0 {
		a.log.Info("joined this region's servers in the WAN pool", "contacted", n)
	} else {
		a.log.Debug("this region's servers not reachable in the WAN pool", "servers", join, "error", err)
	}
}

// everyUntilStop runs fn every interval until the agent stops (the
// caller did a.wg.Add(1)).
func (a *Agent) everyUntilStop(interval time.Duration, fn func()) {
	defer a.wg.Done()
	tick := time.NewTicker(interval)
	defer tick.Stop()
	for {
		select {
		case <-a.stop:
			return
		case <-tick.C:
			fn()
		}
	}
}

// wanMeta is this server's WAN metadata.
func (a *Agent) wanMeta(leader bool) membership.Meta {
	return membership.Meta{Role: membership.RoleServer, Region: a.cfg.Region, Datacenter: a.cfg.Datacenter,
		NodeID: a.raftID, NodeName: a.nodeName(), RPCAddr: a.RPCAddr(), HTTPAddr: a.HTTPAddr(),
		RaftAddr: a.raft.LocalAddr(), Build: node.Version, Voter: true, Leader: leader}
}

// wanLeaderGossip returns what gossips this server's leadership of its
// region in the WAN pool whenever it changes (run by everyUntilStop).
func (a *Agent) wanLeaderGossip() func() {
	gossiped := a.raft.IsLeader()
	return func() {
		if lead := a.raft.IsLeader(); lead != gossiped {
			if err := a.wan.UpdateMeta(a.wanMeta(lead)); err != nil {
				a.log.Warn("gossiping leadership in the WAN pool", "leader", lead, "error", err)
			}
			gossiped = lead
		}
	}
}

// JoinWAN joins the WAN pool through the given servers' WAN addresses
// (troupe server join, PUT /v1/agent/join): it returns how many answered.
func (a *Agent) JoinWAN(addrs []string) (int, error) {
	if a.wan == nil {
		return 0, fmt.Errorf("%w: only a clustered server joins other regions", ErrNotServer)
	}
	full := make([]string, len(addrs))
	for i, addr := range addrs {
		full[i] = rpcAddrOf(addr, a.cfg.WANPort) // a bare host: the WAN port
	}
	return a.wan.Join(full)
}

// Regions lists the regions of the alive WAN servers and this one, sorted.
func (a *Agent) Regions() []string {
	out := []string{a.cfg.Region}
	if a.wan != nil {
		for _, m := range a.wan.Servers() {
			out = append(out, m.Meta.Region)
		}
	}
	slices.Sort(out)
	return slices.Compact(out)
}

// regionServers lists the alive servers of region in the WAN pool, its
// leader first.
func (a *Agent) regionServers(region string) []membership.Member {
	if a.wan == nil {
		return nil
	}
	var out []membership.Member
	for _, m := range a.wan.Servers() {
		if m.Meta.Region == region && m.Meta.RPCAddr != "" {
			out = append(out, m)
		}
	}
	slices.SortStableFunc(out, func(x, y membership.Member) int {
		switch {
		case x.Meta.Leader == y.Meta.Leader:
			return 0
		case x.Meta.Leader:
			return -1
		}
		return 1
	})
	return out
}

// wanMembers are the other regions' servers as /v1/agent/members lists
// them (Nomad lists every region's servers there): "leader" is what each
// gossips in the WAN pool.
func (a *Agent) wanMembers() []*api.AgentMember {
	if a.wan == nil {
		return nil
	}
	var out []*api.AgentMember
	for _, mem := range a.wan.Members() {
		if mem.Meta.Region == a.cfg.Region {
			continue // the LAN pool's rows say more of this region's servers
		}
		tags := mem.Meta.Tags()
		tags["raft_vsn"], tags["leader"] = "3", strconv.FormatBool(mem.Meta.Leader && mem.Status == membership.StatusAlive)
		if _, p, err := net.SplitHostPort(mem.Meta.RaftAddr); err == nil {
			tags["port"] = p
		}
		out = append(out, &api.AgentMember{Name: mem.Name, Addr: mem.Addr, Port: mem.Port, Status: mem.Status,
			Tags: tags, ProtocolMin: 1, ProtocolMax: 5, ProtocolCur: 2, DelegateMin: 2, DelegateMax: 5, DelegateCur: 4})
	}
	return out
}
