package e2e

import (
	"context"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"github.com/troupe-dev/troupe/api"
	"github.com/troupe-dev/troupe/cluster/clustertest"
)

// Ports every agent listens on, all on its -bind address.
const (
	httpPort = 4646
	raftPort = 4649
)

// Bounds of the cluster tests' polls and calls.
const (
	formTimeout    = 60 * time.Second // 3 servers elect a leader, clients register
	settleTimeout  = 45 * time.Second // allocations run, nodes change status
	pollEvery      = 200 * time.Millisecond
	requestTimeout = 5 * time.Second  // one HTTP call to an agent
	cliTimeout     = 30 * time.Second // one CLI run
)

// logDirEnv, when set, keeps every agent's log under $TROUPE_E2E_LOG_DIR/<test>.
const logDirEnv = "TROUPE_E2E_LOG_DIR"

// clusterTuning scales failure detection down so the scenarios take seconds.
var clusterTuning = []string{
	"-heartbeat-ttl", "1s", "-heartbeat-grace", "1s",
	"-gossip-interval", "100ms", "-raft-timeout", "500ms", "-log-level", "debug",
}

// agentProc is one `troupe agent` running in a host of the cluster.
type agentProc struct {
	Name   string // -node
	Host   *clustertest.Host
	Proc   *clustertest.Proc
	API    *api.Client
	killed bool // the test killed it on purpose
}

// HTTPAddr is the agent's API address, as the CLI's -address takes it.
func (a *agentProc) HTTPAddr() string { return "http://" + a.Host.AddrPort(httpPort) }

// RaftAddr is the address /v1/status/leader names when a is the leader.
func (a *agentProc) RaftAddr() string { return a.Host.AddrPort(raftPort) }

// Kill SIGKILLs the agent (its tasks, in their own sessions, live on).
func (a *agentProc) Kill(t *testing.T) {
	t.Helper()
	a.killed = true
	require.NoError(t, a.Proc.Kill())
	require.NoError(t, ignoreExit(a.Proc.Wait(10*time.Second)), "agent %s did not die", a.Name)
}

// ignoreExit drops the *exec.ExitError a killed process exits with.
func ignoreExit(err error) error {
	if _, ok := err.(*exec.ExitError); ok {
		return nil
	}
	return err
}

// testCluster is its servers (the first hosts) and its clients (the rest).
type testCluster struct {
	c       *clustertest.Cluster
	servers []*agentProc
	clients []*agentProc
}

// startCluster starts 3 servers and the given number of clients, each in
// its own host, and waits until the servers agree on a leader, gossip
// shows 3 alive servers and every client is a ready node.
func startCluster(t *testing.T, clients int) *testCluster {
	t.Helper()
	// Made before the cluster, so that it is removed after the cluster's
	// cleanup has killed the agents writing into it.
	dataRoot := t.TempDir()
	return startAgents(t, dataRoot, 3, clients)
}

// startAgents makes a cluster of servers+clients hosts and starts a server
// agent (bootstrap-expect servers) in each of the first hosts and a client
// in each of the others, their data under dataRoot, and waits until the
// servers agree on a leader, gossip shows them all alive and every client
// is a ready node. clientArgs[i], when given, are more arguments of
// client i. The cluster's cleanup, which kills the agents, runs before the
// cleanups registered earlier.
func startAgents(t *testing.T, dataRoot string, servers, clients int, clientArgs ...[]string) *testCluster {
	t.Helper()
	return startAgentsTuned(t, dataRoot, servers, clients, clusterTuning, clientArgs...)
}

// startAgentsTuned is startAgents with the given flags on every agent in
// place of clusterTuning.
func startAgentsTuned(t *testing.T, dataRoot string, servers, clients int, tuning []string, clientArgs ...[]string) *testCluster {
	t.Helper()
	c := clustertest.New(t, servers+clients, logDirOption(t)...)
	tc := &testCluster{c: c}
	hosts := c.Hosts()
	serverAddrs := make([]string, 0, servers)
	for _, h := range hosts[:servers] {
		serverAddrs = append(serverAddrs, h.Addr)
	}
	start := time.Now()
	for i := range servers {
		args := []string{"agent", "-server", "-bootstrap-expect", strconv.Itoa(servers)}
		for j, addr := range serverAddrs {
			if j != i {
				args = append(args, "-join", addr)
			}
		}
		tc.servers = append(tc.servers, startAgentTuned(t, hosts[i], fmt.Sprintf("server%d", i), dataRoot, args, tuning))
	}
	for i := range clients {
		args := []string{"agent", "-client", "-servers", strings.Join(serverAddrs, ",")}
		if i < len(clientArgs) {
			args = append(args, clientArgs[i]...)
		}
		tc.clients = append(tc.clients, startAgentTuned(t, hosts[servers+i], fmt.Sprintf("client%d", i), dataRoot, args, tuning))
	}
	tc.eventually(t, formTimeout, "cluster formation", func() (bool, string) { return tc.formed(clients) })
	t.Logf("%d servers + %d clients formed in %.1f s", servers, clients, time.Since(start).Seconds())
	return tc
}

// logDirOption keeps the logs in a fresh directory under $TROUPE_E2E_LOG_DIR
// (named after the test) when it is set.
func logDirOption(t *testing.T) []clustertest.Option {
	t.Helper()
	root := os.Getenv(logDirEnv)
	if root == "" {
		return nil
	}
	require.NoError(t, os.MkdirAll(root, 0o755))
	dir, err := os.MkdirTemp(root, strings.ReplaceAll(t.Name(), "/", "_")+"-")
	require.NoError(t, err)
	return []clustertest.Option{clustertest.WithLogDir(dir)}
}

func startAgent(t *testing.T, h *clustertest.Host, name, dataRoot string, args []string) *agentProc {
	t.Helper()
	return startAgentTuned(t, h, name, dataRoot, args, clusterTuning)
}

func startAgentTuned(t *testing.T, h *clustertest.Host, name, dataRoot string, args, tuning []string) *agentProc {
	t.Helper()
	dir := filepath.Join(dataRoot, name)
	require.NoError(t, os.MkdirAll(dir, 0o755))
	args = append(args, "-data-dir", dir, "-bind", h.Addr, "-node", name)
	// The agent's temp dir (where too-deep CSI plugin sockets go) is the
	// test's own short one: a killed agent cannot clean up after itself.
	tmp, err := os.MkdirTemp("", "tt")
	require.NoError(t, err)
	t.Cleanup(func() { _ = os.RemoveAll(tmp) })
	p, err := h.StartSpec(name, clustertest.Spec{Path: troupeBin, Args: append(args, tuning...), Env: []string{"TMPDIR=" + tmp}})
	require.NoError(t, err)
	a := &agentProc{Name: name, Host: h, Proc: p}
	a.API, err = api.NewClient(&api.Config{
		Address: a.HTTPAddr(), HTTPClient: &http.Client{Timeout: requestTimeout},
	})
	require.NoError(t, err)
	return a
}

// formed says whether every live server names the same leader, gossip has
// every server alive and `clients` nodes are ready; else what is missing.
func (tc *testCluster) formed(clients int) (bool, string) {
	leaders := map[string]bool{}
	for _, s := range tc.liveServers() {
		l, err := s.API.Status().Leader()
		if err != nil || l == "" {
			return false, fmt.Sprintf("%s: no leader (%v)", s.Name, err)
		}
		leaders[l] = true
	}
	if len(leaders) != 1 {
		return false, fmt.Sprintf("servers name different leaders: %v", leaders)
	}
	s := tc.server()
	members, err := s.API.Agent().Members()
	if err != nil {
		return false, fmt.Sprintf("%s: members: %v", s.Name, err)
	}
	alive := 0
	for _, m := range members.Members {
		if m.Status == "alive" && (m.Tags["region"] == "" || m.Tags["region"] == members.ServerRegion) { // not other regions' (WAN)
			alive++
		}
	}
	if alive != len(tc.servers) {
		return false, fmt.Sprintf("%d alive servers in gossip, want %d", alive, len(tc.servers))
	}
	nodes, err := tc.nodes()
	if err != nil {
		return false, err.Error()
	}
	ready := 0
	for _, n := range nodes {
		if n.Status == "ready" {
			ready++
		}
	}
	return ready == clients, fmt.Sprintf("%d of %d clients ready: %s", ready, clients, describeNodes(nodes))
}

// liveServers are the servers the test has not killed.
func (tc *testCluster) liveServers() []*agentProc {
	var out []*agentProc
	for _, s := range tc.servers {
		if !s.killed {
			out = append(out, s)
		}
	}
	return out
}

// server is a live server to query.
func (tc *testCluster) server() *agentProc { return tc.liveServers()[0] }

// leader is the server /v1/status/leader names, asked of a live server.
func (tc *testCluster) leader(t *testing.T) *agentProc {
	t.Helper()
	addr, err := tc.server().API.Status().Leader()
	require.NoError(t, err)
	for _, s := range tc.servers {
		if s.RaftAddr() == addr {
			return s
		}
	}
	t.Fatalf("leader %q is none of the servers", addr)
	return nil
}

// follower is a live server that is not the leader.
func (tc *testCluster) follower(t *testing.T) *agentProc {
	t.Helper()
	l := tc.leader(t)
	for _, s := range tc.liveServers() {
		if s != l {
			return s
		}
	}
	t.Fatal("no follower")
	return nil
}

// eventually polls cond until it holds, failing the test at the deadline
// with cond's last description, or as soon as an agent the test did not
// kill has exited.
func (tc *testCluster) eventually(t *testing.T, timeout time.Duration, what string, cond func() (bool, string)) {
	t.Helper()
	deadline := time.Now().Add(timeout)
	tick := time.NewTicker(pollEvery)
	defer tick.Stop()
	for {
		if err := tc.checkAlive(); err != nil {
			t.Fatalf("%s: %v", what, err)
		}
		ok, state := cond()
		if ok {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s: not done after %s; last: %s", what, timeout, state)
		}
		<-tick.C
	}
}

// checkAlive returns an error naming an agent that exited on its own.
func (tc *testCluster) checkAlive() error {
	for _, a := range append(append([]*agentProc(nil), tc.servers...), tc.clients...) {
		if !a.killed && a.Proc.Exited() {
			log, _ := a.Proc.Log()
			return fmt.Errorf("agent %s exited (code %d); log tail:\n%s", a.Name, a.Proc.ExitCode(), tail(log, 40))
		}
	}
	return nil
}

// tail returns the last n lines of s.
func tail(s string, n int) string {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n")
}

// cli runs `troupe <cmd> -address <a> args...` from the test process and
// returns its combined output and exit code.
func (tc *testCluster) cli(t *testing.T, a *agentProc, cmd string, args ...string) (string, int) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), cliTimeout)
	defer cancel()
	argv := append(append(strings.Fields(cmd), "-address", a.HTTPAddr()), args...)
	c := exec.CommandContext(ctx, troupeBin, argv...)
	out, err := c.CombinedOutput()
	if ee, ok := err.(*exec.ExitError); ok {
		return string(out), ee.ExitCode()
	}
	require.NoError(t, err, "troupe %v", argv)
	return string(out), 0
}

// tableRows returns the fields of each row of a CLI table, header dropped.
func tableRows(out string) [][]string {
	lines := strings.Split(strings.TrimSpace(out), "\n")
	rows := make([][]string, 0, len(lines))
	for _, l := range lines[1:] {
		if f := strings.Fields(l); len(f) > 0 {
			rows = append(rows, f)
		}
	}
	return rows
}

// nodes lists the client nodes, asked of a live server.
func (tc *testCluster) nodes() ([]*api.NodeListStub, error) {
	s := tc.server()
	nodes, _, err := s.API.Nodes().List(nil)
	if err != nil {
		return nil, fmt.Errorf("%s: nodes: %w", s.Name, err)
	}
	return nodes, nil
}

// nodeIDs maps each client's name to its node ID.
func (tc *testCluster) nodeIDs(t *testing.T) map[string]string {
	t.Helper()
	nodes, err := tc.nodes()
	require.NoError(t, err)
	ids := map[string]string{}
	for _, n := range nodes {
		ids[n.Name] = n.ID
	}
	for _, c := range tc.clients {
		require.Contains(t, ids, c.Name, "client %s is no node: %s", c.Name, describeNodes(nodes))
	}
	return ids
}

// nodeStatus waits until the named client's node has the status want.
func (tc *testCluster) waitNodeStatus(t *testing.T, client *agentProc, want string, timeout time.Duration) {
	t.Helper()
	tc.eventually(t, timeout, fmt.Sprintf("node %s %s", client.Name, want), func() (bool, string) {
		nodes, err := tc.nodes()
		if err != nil {
			return false, err.Error()
		}
		for _, n := range nodes {
			if n.Name == client.Name {
				return n.Status == want, describeNodes(nodes)
			}
		}
		return false, describeNodes(nodes)
	})
}

func describeNodes(nodes []*api.NodeListStub) string {
	parts := make([]string, 0, len(nodes))
	for _, n := range nodes {
		parts = append(parts, fmt.Sprintf("%s=%s", n.Name, n.Status))
	}
	sort.Strings(parts)
	return "[" + strings.Join(parts, " ") + "]"
}
