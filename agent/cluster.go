package agent

import (
	"fmt"
	"net"
	"strconv"
	"time"

	"github.com/cenkalti/backoff/v4"

	"github.com/troupe-dev/troupe/actors/node"
	"github.com/troupe-dev/troupe/cluster"
	"github.com/troupe-dev/troupe/cluster/membership"
	"github.com/troupe-dev/troupe/cluster/remote"
)

// startRemote enables the gRPC actor transport on the RPC port.
func (a *Agent) startRemote() error {
	listen, dial := a.rpcTLS()
	t, err := remote.Start(a.sys.ActorSystem, remote.Config{BindAddr: a.cfg.addr(a.cfg.RPCPort), Logger: a.log,
		ListenTLS: listen, DialTLS: dial, Guard: a.guardRPC})
	if err != nil {
		return fmt.Errorf("agent: rpc transport: %w", err)
	}
	a.transport = t
	return nil
}

// RPCAddr is the address of this agent's actor transport ("" in -dev).
func (a *Agent) RPCAddr() string {
	if a.transport == nil {
		return ""
	}
	return a.transport.Address()
}

// startMembership joins the gossip pool and, on servers, bootstraps raft
// once -bootstrap-expect servers are seen.
func (a *Agent) startMembership() error {
	meta := membership.Meta{Role: membership.RoleClient, Region: a.cfg.Region, Datacenter: a.cfg.Datacenter,
		RPCAddr: a.RPCAddr(), HTTPAddr: a.HTTPAddr(), Build: node.Version}
	if a.node != nil {
		meta.NodeID, meta.NodeName = a.node.GetID(), a.node.GetName()
	}
	if a.cfg.Server {
		meta.Role, meta.NodeID, meta.RaftAddr = membership.RoleServer, a.raftID, a.raft.LocalAddr()
		meta.Voter, meta.BootstrapExpect = true, a.cfg.BootstrapExpect
		if meta.NodeName == "" {
			meta.NodeName = a.nodeName()
		}
		// The WAN member first: the LAN pool tells this region's other
		// servers where it is (wan.go's flood join).
		if err := a.startWAN(); err != nil { // wan.go
			return err
		}
		a.wanAddr = a.wan.GossipAddr()
		meta.WANAddr = a.wanAddr
	}
	m, err := a.newGossipPool(membership.Config{Name: meta.NodeName, BindAddr: a.cfg.BindAddr, BindPort: a.cfg.GossipPort,
		Meta: meta, Logger: a.log})
	if err != nil {
		return err
	}
	a.members = m
	peers := a.cfg.Join
	if !a.cfg.Server {
		for _, s := range a.cfg.Servers {
			peers = append(peers, gossipAddrOf(s, a.cfg.GossipPort))
		}
	}
	a.wg.Add(1)
	go a.joinLoop(m, "lan", peers)
	a.wg.Add(1)
	go a.watchMembers()
	if a.cfg.Server {
		a.wg.Add(1)
		go a.everyUntilStop(wanFloodInterval, a.floodWAN) // wan.go
	}
	return nil
}

// newGossipPool starts a gossip pool, the LAN pool or the servers' WAN
// pool (cfg.WAN), with the agent's gossip tuning and keys.
func (a *Agent) newGossipPool(cfg membership.Config) (*membership.Membership, error) {
	if d := a.cfg.GossipInterval; d > 0 {
		cfg.ProbeInterval, cfg.ProbeTimeout, cfg.GossipInterval = 2*d, d, d
		cfg.SuspicionMult, cfg.PushPullInterval = 3, 10*d
		if cfg.WAN {
			cfg.TCPTimeout = 20 * d // memberlist's WAN default is 30 s
		}
	}
	primary, others, err := a.gossipKeys() // gossip_keyring.go: both pools share the keys
	if err != nil {
		return nil, err
	}
	cfg.SecretKey, cfg.Keys = primary, others
	m, err := membership.New(cfg)
	if err != nil {
		what := "gossip"
		if cfg.WAN {
			what = "wan gossip"
		}
		return nil, fmt.Errorf("agent: %s: %w", what, err)
	}
	return m, nil
}

// joinLoop joins the given peers of gossip pool m (the LAN pool or the
// servers' WAN pool), retrying with backoff until one answers or the
// agent stops.
func (a *Agent) joinLoop(m *membership.Membership, pool string, peers []string) {
	defer a.wg.Done()
	if len(peers) == 0 {
		return
	}
	b := backoff.NewExponentialBackOff()
	b.InitialInterval, b.MaxInterval, b.MaxElapsedTime = 200*time.Millisecond, 10*time.Second, 0
	for {
		n, err := m.Join(peers)
		if n > 0 {
			a.log.Info("joined the cluster", "pool", pool, "contacted", n)
			return
		}
		d := b.NextBackOff()
		a.log.Warn("joining the cluster failed, retrying", "pool", pool, "peers", peers, "error", err, "in", d)
		select {
		case <-a.stop:
			return
		case <-time.After(d):
		}
	}
}

// watchMembers reacts to gossip: a server waiting to bootstrap counts its
// peers; the leader adds new servers to raft as voters and passes on the
// clients gossip reports failed to their node actors (evidence.go).
func (a *Agent) watchMembers() {
	defer a.wg.Done()
	tick, sweep := time.NewTicker(500*time.Millisecond), time.NewTicker(evidenceSweep)
	defer tick.Stop()
	defer sweep.Stop()
	for {
		select {
		case <-a.stop:
			return
		case ev, ok := <-a.members.Events():
			if !ok {
				return
			}
			a.suspectOnEvent(ev) // evidence.go
		case <-sweep.C:
			a.suspectFailedClients()
		case <-tick.C:
		}
		if a.cfg.Server {
			a.maybeBootstrap()
			a.addNewServers()
		}
	}
}

func (a *Agent) maybeBootstrap() {
	want := a.cfg.BootstrapExpect
	if want < 2 || a.raft.HasState() {
		return
	}
	var peers []cluster.Peer
	for _, m := range a.members.Servers() {
		if m.Meta.BootstrapExpect == want && m.Meta.RaftAddr != "" {
			peers = append(peers, cluster.Peer{ID: m.Meta.NodeID, Address: m.Meta.RaftAddr, Voter: true})
		}
	}
	if len(peers) < want {
		return
	}
	if err := a.raft.BootstrapServers(peers[:want]); err != nil {
		a.log.Error("raft bootstrap failed", "error", err)
		return
	}
	a.log.Info("raft bootstrapped", "servers", want)
}

// addNewServers makes every alive server the leader does not know a voter.
func (a *Agent) addNewServers() {
	if !a.raft.IsLeader() {
		return
	}
	known := map[string]bool{}
	ps, err := a.raft.Peers()
	if err != nil {
		return
	}
	for _, p := range ps {
		known[p.ID] = true
	}
	for _, m := range a.members.Servers() {
		if known[m.Meta.NodeID] || m.Meta.RaftAddr == "" || m.Meta.Region != a.cfg.Region {
			continue
		}
		if err := a.raft.AddVoter(m.Meta.NodeID, m.Meta.RaftAddr); err != nil {
			a.log.Warn("adding raft voter failed", "server", m.Name, "error", err)
			continue
		}
		a.log.Info("added raft voter", "server", m.Name, "addr", m.Meta.RaftAddr)
	}
}

// leaderRPCAddr maps raft's leader address to that server's RPC address.
func (a *Agent) leaderRPCAddr() string {
	addr, _ := a.raft.Leader()
	if addr == "" || a.members == nil {
		return ""
	}
	for _, m := range a.members.Servers() {
		if m.Meta.RaftAddr == addr {
			return m.Meta.RPCAddr
		}
	}
	return ""
}

// serverRPCAddrs lists the RPC addresses of the alive servers.
func (a *Agent) serverRPCAddrs() []string {
	if a.members == nil {
		return nil
	}
	var out []string
	for _, m := range a.members.Servers() {
		out = append(out, m.Meta.RPCAddr)
	}
	return out
}

// gossipAddrOf turns a server address (host or host:rpc-port) into its
// gossip address.
func gossipAddrOf(server string, port int) string {
	host, _, err := net.SplitHostPort(server)
	if err != nil {
		host = server
	}
	return net.JoinHostPort(host, strconv.Itoa(port))
}

// rpcAddrOf adds the default RPC port to a bare host.
func rpcAddrOf(server string, port int) string {
	if _, _, err := net.SplitHostPort(server); err == nil {
		return server
	}
	return net.JoinHostPort(server, strconv.Itoa(port))
}

func (a *Agent) nodeName() string {
	if a.cfg.NodeName != "" {
		return a.cfg.NodeName
	}
	return hostname()
}

// RemoveRaftPeer removes a server from raft (the leader refuses to remove
// the last voter).
func (a *Agent) RemoveRaftPeer(id string) error {
	if a.raft == nil {
		return ErrNotServer
	}
	return a.raft.RemoveServer(id)
}

// LeaderHTTP is the leader's HTTP address when another server leads.
func (a *Agent) LeaderHTTP() string {
	if a.raft == nil || a.raft.IsLeader() || a.members == nil {
		return ""
	}
	addr, _ := a.raft.Leader()
	for _, m := range a.members.Servers() {
		if m.Meta.RaftAddr == addr {
			return m.Meta.HTTPAddr
		}
	}
	return ""
}
