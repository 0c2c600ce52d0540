package agent

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"time"

	"github.com/troupe-dev/troupe/actors/node"
	"github.com/troupe-dev/troupe/api"
	"github.com/troupe-dev/troupe/cluster"
	"github.com/troupe-dev/troupe/cluster/membership"
	"github.com/troupe-dev/troupe/cluster/remote"
	"github.com/troupe-dev/troupe/httpapi"
	"github.com/troupe-dev/troupe/messages"
)

// listenHTTP binds the API's address first thing, so that the address the
// node registers is known before anything runs.
func (a *Agent) listenHTTP() error {
	ln, err := net.Listen("tcp", a.cfg.HTTPAddr)
	if err != nil {
		return fmt.Errorf("agent: http listen on %s: %w", a.cfg.HTTPAddr, err)
	}
	a.ln = ln
	return nil
}

// startHTTP serves the API once everything it reads is set up.
func (a *Agent) startHTTP() error {
	if err := a.startTelemetry(); err != nil {
		return err
	}
	ln := a.tlsListener(a.ln)
	var fed httpapi.Federation
	if a.cfg.Server {
		fed = a // wan.go, federation.go
	}
	opts := httpapi.Options{Region: a.cfg.Region, Federation: fed, Limits: a.cfg.JobLimits,
		Metrics: a.tele, Logs: a.logs,
		ACLEnabled: a.cfg.ACLEnabled, ACLResetFile: filepath.Join(a.dataDir, "server", ACLResetFileName)}
	if a.cfg.Server {
		opts.AuthoritativeRegion = a.cfg.AuthoritativeRegion // acl_replication.go
	} else {
		opts.Tokens, opts.TokenTTL = serverTokens{a}, a.cfg.ACLTokenTTL
	}
	srv := httpapi.New(a, a.log, opts)
	a.api.Store(srv)
	var h http.Handler = srv
	if !a.cfg.Server {
		h = a.clientOnlyHandler(h)
	}
	if a.httpsOn() {
		h = httpapi.WithProxyTransport(h, "https", a.proxyTransport())
	}
	a.http = &http.Server{Handler: httpapi.Compress(h), ReadHeaderTimeout: 10 * time.Second}
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

// clientOnlyHandler serves what a client knows itself (its allocations'
// logs, its stats, its actor tree, itself) and forwards every other
// request to a server's HTTP API: the server passes a request about
// another client on to that client's agent.
func (a *Agent) clientOnlyHandler(local http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if a.servesHere(r) {
			local.ServeHTTP(w, r)
			return
		}
		if a.members == nil {
			http.Error(w, "no server known yet", http.StatusServiceUnavailable)
			return
		}
		for _, m := range a.members.Servers() {
			if m.Meta.HTTPAddr != "" {
				httpapi.ProxyTo(m.Meta.HTTPAddr).ServeHTTP(w, r)
				return
			}
		}
		http.Error(w, "no server known yet", http.StatusServiceUnavailable)
	})
}

// servesHere reports whether a client-only agent answers r itself.
func (a *Agent) servesHere(r *http.Request) bool {
	p, q := r.URL.Path, r.URL.Query()
	if region := q.Get("region"); region != "" && region != a.cfg.Region {
		return false // a server forwards it to that region
	}
	switch {
	case p == "/v1/agent/self", p == "/v1/actors" && q.Get("node") == "", p == "/v1/metrics", p == "/v1/agent/monitor":
		return true
	case strings.HasPrefix(p, "/v1/agent/keyring/"): // its own keys, when a server fans out
		return q.Get("local") == "true"
	case p == "/v1/client/stats":
		id := q.Get("node_id")
		return id == "" || id == a.node.GetID()
	case strings.HasPrefix(p, "/v1/client/fs/logs/"):
		sa, err := a.db.Alloc(strings.TrimPrefix(p, "/v1/client/fs/logs/"))
		return err == nil && sa != nil
	}
	return strings.HasPrefix(p, "/v1/client/")
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
func (a *Agent) ActorTree(ctx context.Context, nodeID string) (*api.ActorTree, error) {
	self := ""
	if a.node != nil {
		self = a.node.GetID()
	}
	msg := a.actorTreeMessage()
	if nodeID != "" && nodeID != self {
		n := a.store.Snapshot().NodeByID(nodeID)
		if n == nil || n.GetRPCAddr() == "" || a.transport == nil {
			return nil, fmt.Errorf("%w: %q", httpapi.ErrUnknownNode, nodeID)
		}
		var err error
		msg, err = remote.Request[*messages.ActorTreeResponse](ctx, a.sys.Root, n.GetRPCAddr(), "agent", &messages.GetActorTree{})
		if err != nil {
			return nil, fmt.Errorf("agent: actor tree of node %s at %s: %w", nodeID, n.GetRPCAddr(), err)
		}
	}
	out := &api.ActorTree{Node: msg.GetNode()}
	for _, in := range msg.GetActors() {
		out.Actors = append(out.Actors, &api.ActorInfo{Path: in.Path, Kind: in.Kind, Parent: in.Parent,
			Children: in.Children, Phase: in.Phase, MailboxLen: int(in.MailboxLen), Restarts: int(in.Restarts),
			LastMessage: in.LastMessage, LastMessageAt: in.LastMessageAt, Messages: in.Messages})
	}
	return out, nil
}

func (a *Agent) member() api.AgentMember {
	host, port, _ := net.SplitHostPort(a.HTTPAddr())
	p, _ := strconv.Atoi(port)
	leaderAddr := ""
	if a.raft != nil {
		leaderAddr, _ = a.raft.Leader()
	}
	name := a.cfg.NodeName
	if a.node != nil {
		name = a.node.GetName()
	}
	return api.AgentMember{Name: name + "." + a.cfg.Region, Addr: host, Port: uint16(p), Status: "alive",
		Tags: map[string]string{"role": "troupe", "region": a.cfg.Region, "dc": a.cfg.Datacenter,
			"build": node.Version, "rpc_addr": a.RPCAddr(), "raft_addr": a.raftAddr(), "raft_vsn": "3", "port": port,
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
		"runtime": {"goroutines": strconv.Itoa(runtime.NumGoroutine()), "version": runtime.Version()},
		"agent":   {"uptime": time.Since(a.started).Round(time.Second).String()},
	}
	cfg := map[string]any{"Region": a.cfg.Region, "Datacenter": a.cfg.Datacenter, "DataDir": a.dataDir,
		"DevMode": a.cfg.Dev, "Server": map[string]any{"Enabled": a.cfg.Server},
		"Client": map[string]any{"Enabled": a.cfg.Client}, "Addresses": map[string]any{"HTTP": a.HTTPAddr()},
		"Version": map[string]any{"Version": node.Version}}
	if a.raft != nil {
		stats["raft"] = a.raft.Stats()
	}
	if a.node != nil {
		cfg["NodeName"] = a.node.GetName()
		stats["client"] = map[string]string{"node_id": a.node.GetID()}
	}
	return &api.AgentSelf{Config: cfg, Member: m, Stats: stats}
}

// Members answers /v1/agent/members: the servers of the gossip pool (Nomad
// lists servers there), or this agent alone without gossip.
func (a *Agent) Members() *api.ServerMembers {
	m := a.member()
	out := &api.ServerMembers{ServerName: m.Name, ServerRegion: a.cfg.Region, ServerDC: a.cfg.Datacenter}
	if a.members == nil {
		out.Members = []*api.AgentMember{&m}
		return out
	}
	// Gossip and raft are different things: "voter" says whether raft
	// counts the server as a voter now, whatever gossip says of it.
	voters := map[string]bool{}
	leader := ""
	if a.raft != nil {
		leader, _ = a.raft.Leader()
	}
	for _, p := range a.peers() {
		voters[p.id] = p.voter
	}
	for _, mem := range a.members.Members() {
		if mem.Meta.Role != membership.RoleServer {
			continue
		}
		tags := mem.Meta.Tags()
		// Nomad's "port" is the server's RPC port, where its raft runs:
		// Addr and "port" make the address /v1/status/leader names.
		tags["raft_vsn"], tags["port"] = "3", strconv.Itoa(int(mem.Port))
		if _, p, err := net.SplitHostPort(mem.Meta.RaftAddr); err == nil {
			tags["port"] = p
		}
		tags["voter"] = strconv.FormatBool(voters[mem.Meta.NodeID])
		tags["leader"] = strconv.FormatBool(leader != "" && leader == mem.Meta.RaftAddr)
		out.Members = append(out.Members, &api.AgentMember{Name: mem.Name + "." + mem.Meta.Region, Addr: mem.Addr,
			Port: mem.Port, Status: mem.Status, Tags: tags, ProtocolMin: 1, ProtocolMax: 5, ProtocolCur: 2,
			DelegateMin: 2, DelegateMax: 5, DelegateCur: 4})
	}
	out.Members = append(out.Members, a.wanMembers()...) // wan.go
	return out
}

// Leader answers /v1/status/leader: the leader's raft (RPC) address, ""
// while there is none. Raft in memory (dev mode) has no network address:
// there the leader is this server, named by the address its member row
// shows (Addr and Tags["port"], its HTTP address), which Nomad's `server
// members` compares.
func (a *Agent) Leader() string {
	if a.raft == nil {
		return ""
	}
	addr, _ := a.raft.Leader()
	if cluster.IsInmemAddr(addr) {
		// Alone in memory: the leader is this server, and its member row
		// shows its HTTP address (see member).
		return a.HTTPAddr()
	}
	return addr
}

type peer struct {
	id, addr    string
	voter, lead bool
	self        bool
}

func (a *Agent) peers() []peer {
	if a.raft == nil {
		return nil
	}
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
