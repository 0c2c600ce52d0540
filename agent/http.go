package agent

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"runtime"
	"strconv"
	"time"

	"github.com/troupe-dev/troupe/actors"
	"github.com/troupe-dev/troupe/actors/node"
	"github.com/troupe-dev/troupe/api"
	"github.com/troupe-dev/troupe/httpapi"
)

func (a *Agent) startHTTP() error {
	ln, err := net.Listen("tcp", a.cfg.HTTPAddr)
	if err != nil {
		return fmt.Errorf("agent: http listen on %s: %w", a.cfg.HTTPAddr, err)
	}
	a.ln = ln
	a.http = &http.Server{Handler: httpapi.New(a, a.log), ReadHeaderTimeout: 10 * time.Second}
	a.wg.Add(1)
	go func() {
		defer a.wg.Done()
		if err := a.http.Serve(ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
			a.log.Error("http server stopped", "error", err)
		}
	}()
	a.log.Info("http api listening", "addr", ln.Addr().String())
	return nil
}

// HTTPAddr is the address the API listens on (with the real port when the
// configured one was 0).
func (a *Agent) HTTPAddr() string {
	if a.ln == nil {
		return a.cfg.HTTPAddr
	}
	return a.ln.Addr().String()
}

// Now is the agent's clock.
func (a *Agent) Now() time.Time { return a.clock.Now() }

// ActorTree returns this agent's live actor tree.
func (a *Agent) ActorTree(_ context.Context, nodeID string) (*api.ActorTree, error) {
	self := ""
	if a.node != nil {
		self = a.node.GetID()
	}
	if nodeID != "" && nodeID != self {
		return nil, fmt.Errorf("%w: %q (remote trees need the cluster transport)", httpapi.ErrUnknownNode, nodeID)
	}
	out := &api.ActorTree{Node: self}
	for _, in := range a.sys.Tree() {
		out.Actors = append(out.Actors, toAPI(in))
	}
	return out, nil
}

func toAPI(in *actors.Info) *api.ActorInfo {
	return &api.ActorInfo{Path: in.Path, Kind: in.Kind, Parent: in.Parent, Children: in.Children, Phase: in.Phase,
		MailboxLen: in.MailboxLen, Restarts: in.Restarts, LastMessage: in.LastMessage,
		LastMessageAt: in.LastMessageAt, Messages: in.Messages}
}

func (a *Agent) member() api.AgentMember {
	host, port, _ := net.SplitHostPort(a.HTTPAddr())
	p, _ := strconv.Atoi(port)
	leaderAddr, _ := a.raft.Leader()
	name := a.cfg.NodeName
	if a.node != nil {
		name = a.node.GetName()
	}
	return api.AgentMember{Name: name + "." + a.cfg.Region, Addr: host, Port: uint16(p), Status: "alive",
		Tags: map[string]string{"role": "troupe", "region": a.cfg.Region, "dc": a.cfg.Datacenter,
			"build": node.Version, "rpc_addr": a.raftAddr(), "raft_vsn": "3", "port": port,
			"leader": strconv.FormatBool(leaderAddr == a.raftAddr())},
		ProtocolMin: 1, ProtocolMax: 5, ProtocolCur: 2, DelegateMin: 2, DelegateMax: 5, DelegateCur: 4}
}

func (a *Agent) raftAddr() string {
	for _, p := range a.peers() {
		if p.self {
			return p.addr
		}
	}
	return ""
}

// Self answers /v1/agent/self.
func (a *Agent) Self() *api.AgentSelf {
	m := a.member()
	stats := map[string]map[string]string{
		"raft":    a.raft.Stats(),
		"runtime": {"goroutines": strconv.Itoa(runtime.NumGoroutine()), "version": runtime.Version()},
		"agent":   {"uptime": time.Since(a.started).Round(time.Second).String()},
	}
	cfg := map[string]any{"Region": a.cfg.Region, "Datacenter": a.cfg.Datacenter, "DataDir": a.dataDir,
		"DevMode": a.cfg.Dev, "Server": map[string]any{"Enabled": a.cfg.Server},
		"Client": map[string]any{"Enabled": a.cfg.Client}, "Addresses": map[string]any{"HTTP": a.HTTPAddr()},
		"Version": map[string]any{"Version": node.Version}}
	if a.node != nil {
		cfg["NodeName"] = a.node.GetName()
		stats["client"] = map[string]string{"node_id": a.node.GetID()}
	}
	return &api.AgentSelf{Config: cfg, Member: m, Stats: stats}
}

// Members answers /v1/agent/members.
func (a *Agent) Members() *api.ServerMembers {
	m := a.member()
	return &api.ServerMembers{ServerName: m.Name, ServerRegion: a.cfg.Region, ServerDC: a.cfg.Datacenter,
		Members: []*api.AgentMember{&m}}
}

// Leader answers /v1/status/leader.
func (a *Agent) Leader() string {
	addr, _ := a.raft.Leader()
	return addr
}

type peer struct {
	id, addr    string
	voter, lead bool
	self        bool
}

func (a *Agent) peers() []peer {
	ps, err := a.raft.Peers()
	if err != nil {
		return nil
	}
	out := make([]peer, 0, len(ps))
	for _, p := range ps {
		out = append(out, peer{id: p.ID, addr: p.Address, voter: p.Voter, lead: p.Leader, self: p.ID == a.raftID})
	}
	return out
}

// Peers answers /v1/status/peers.
func (a *Agent) Peers() ([]string, error) {
	out := []string{}
	for _, p := range a.peers() {
		out = append(out, p.addr)
	}
	return out, nil
}

// RaftConfiguration answers /v1/operator/raft/configuration.
func (a *Agent) RaftConfiguration() (*api.RaftConfiguration, error) {
	out := &api.RaftConfiguration{Index: a.store.Snapshot().Index()}
	for _, p := range a.peers() {
		out.Servers = append(out.Servers, &api.RaftServer{ID: p.id, Node: a.member().Name, Address: p.addr,
			Leader: p.lead, Voter: p.voter, RaftProtocol: "3"})
	}
	return out, nil
}
