package e2e

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/troupe-dev/troupe/api"
	"github.com/troupe-dev/troupe/cluster/clustertest"
)

// measureRunsEnv, when set to n > 1, runs each failure-detection scenario n
// times, each in a fresh cluster, and logs the median of every figure
// (scripts/failure-detect.sh sets it).
const measureRunsEnv = "TROUPE_MEASURE_RUNS"

// defaultTuning leaves failure detection at its defaults (heartbeat TTL
// 10 s and grace 10 s, memberlist's LAN gossip timing, raft's timeouts):
// only the log format changes, so that the tests can read the agents' logs.
var defaultTuning = []string{"-log-json"}

// startDefaultCluster starts 3 servers and the given number of clients
// with defaultTuning.
func startDefaultCluster(t *testing.T, clients int) *testCluster {
	t.Helper()
	return startAgentsTuned(t, t.TempDir(), 3, clients, defaultTuning)
}

// figures are the durations one run of a scenario measured, in the order
// they were taken.
type figures struct {
	names []string
	vals  map[string]time.Duration
}

// add records and logs one figure.
func (f *figures) add(t *testing.T, name string, d time.Duration) {
	t.Helper()
	if f.vals == nil {
		f.vals = map[string]time.Duration{}
	}
	if _, ok := f.vals[name]; !ok {
		f.names = append(f.names, name)
	}
	f.vals[name] = d
	t.Logf("%s: %.1f s", name, d.Seconds())
}

// measure runs scenario once, or $TROUPE_MEASURE_RUNS times, each as a
// subtest, and logs the median of each figure over the runs that passed.
// Nothing is asserted on the figures: they are measured, not required.
func measure(t *testing.T, scenario func(t *testing.T, f *figures)) {
	runs := 1
	if v := os.Getenv(measureRunsEnv); v != "" {
		n, err := strconv.Atoi(v)
		require.NoError(t, err, "%s=%q", measureRunsEnv, v)
		runs = max(n, 1)
	}
	var order []string
	all := map[string][]time.Duration{}
	for i := range runs {
		f := &figures{}
		if !t.Run(fmt.Sprintf("run%d", i+1), func(t *testing.T) { scenario(t, f) }) {
			continue
		}
		for _, name := range f.names {
			if _, ok := all[name]; !ok {
				order = append(order, name)
			}
			all[name] = append(all[name], f.vals[name])
		}
	}
	if runs < 2 {
		return
	}
	for _, name := range order {
		vs := all[name]
		slices.Sort(vs)
		secs := make([]string, len(vs))
		for i, v := range vs {
			secs[i] = fmt.Sprintf("%.1f", v.Seconds())
		}
		t.Logf("MEDIAN %s: %.1f s over %d runs (sorted: %s)", name, median(vs).Seconds(), len(vs), strings.Join(secs, " "))
	}
}

// median of sorted durations.
func median(sorted []time.Duration) time.Duration {
	n := len(sorted)
	if n == 0 {
		return 0
	}
	if n%2 == 1 {
		return sorted[n/2]
	}
	return (sorted[n/2-1] + sorted[n/2]) / 2
}

// logLine is one JSON log line of an agent (-log-json), the fields these
// tests read.
type logLine struct {
	Time        time.Time `json:"time"`
	Msg         string    `json:"msg"`
	Node        string    `json:"node"`
	Source      string    `json:"source"`
	LastContact time.Time `json:"last_contact"`
}

// logLines returns the agent's log lines with message msg about node
// (any node when node is "").
func logLines(t *testing.T, a *agentProc, msg, node string) []logLine {
	t.Helper()
	b, err := os.ReadFile(a.Proc.LogPath())
	require.NoError(t, err)
	var out []logLine
	sc := bufio.NewScanner(bytes.NewReader(b))
	sc.Buffer(make([]byte, 0, 64<<10), 1<<20)
	for sc.Scan() {
		var l logLine
		if json.Unmarshal(sc.Bytes(), &l) != nil || l.Msg != msg || (node != "" && l.Node != node) {
			continue
		}
		out = append(out, l)
	}
	return out
}

// spinCmdline is the command line of a spinJob task's process.
const spinCmdline = "/bin/sh\x00-c\x00while true; do sleep 1; done\x00"

// spinTasks counts the spinJob task processes running in host h.
func spinTasks(t *testing.T, h *clustertest.Host) int {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), requestTimeout)
	defer cancel()
	pids, err := h.Pids(ctx)
	require.NoError(t, err)
	n := 0
	for _, pid := range pids {
		b, err := os.ReadFile(filepath.Join("/proc", strconv.Itoa(pid), "cmdline"))
		if err == nil && string(b) == spinCmdline {
			n++
		}
	}
	return n
}

// nodeStub is the named client's node as a live server lists it.
func (tc *testCluster) nodeStub(t *testing.T, name string) *api.NodeListStub {
	t.Helper()
	nodes, err := tc.nodes()
	require.NoError(t, err)
	for _, n := range nodes {
		if n.Name == name {
			return n
		}
	}
	t.Fatalf("no node %s: %s", name, describeNodes(nodes))
	return nil
}

// blockGossip drops the gossip port (memberlist, TCP and UDP, both ways)
// inside host h's network namespace: the others stop hearing it on gossip
// while its RPC and HTTP ports still work.
func blockGossip(t *testing.T, h *clustertest.Host) {
	t.Helper()
	port := strconv.Itoa(gossipPort)
	for _, rule := range [][]string{
		{"INPUT", "-p", "udp", "--dport", port}, {"INPUT", "-p", "tcp", "--dport", port},
		{"OUTPUT", "-p", "udp", "--dport", port}, {"OUTPUT", "-p", "tcp", "--dport", port},
	} {
		args := append(append([]string{"-w", "5", "-I"}, rule...), "-j", "DROP")
		out, err := h.Exec(t.Context(), "iptables", args...)
		require.NoError(t, err, "iptables %v in %s: %s", args, h.Name, out)
	}
}

// replacedOn accepts the job's allocations once all of them run on the
// survivor's node and each of the lost ones (on the dead node) is lost.
func replacedOn(survivorID string, count int, lost []string) allocCheck {
	return func(running, all []*api.AllocListStub) (bool, string) {
		if n := perNode(running); n[survivorID] != count {
			return false, fmt.Sprintf("%d running on %s", n[survivorID], short(survivorID))
		}
		for _, a := range all {
			if slices.Contains(lost, a.ID) && a.ClientStatus != "lost" {
				return false, fmt.Sprintf("alloc %s on the dead node is %s, want lost", short(a.ID), a.ClientStatus)
			}
		}
		return true, ""
	}
}

// spinOnBothClients submits j to a cluster of two clients and waits until
// its allocations run on both; it returns the node IDs by client name and
// the running allocations.
func (tc *testCluster) spinOnBothClients(t *testing.T, j spinJob) (map[string]string, []*api.AllocListStub) {
	t.Helper()
	ids := tc.nodeIDs(t)
	tc.submit(t, tc.server(), j)
	return ids, tc.waitRunning(t, j.ID, j.Count, settleTimeout, onEachNode(ids[tc.clients[0].Name], ids[tc.clients[1].Name]))
}

// allocsOn returns the IDs of the allocations on node nodeID.
func allocsOn(allocs []*api.AllocListStub, nodeID string) []string {
	var ids []string
	for _, a := range allocs {
		if a.NodeID == nodeID {
			ids = append(ids, a.ID)
		}
	}
	return ids
}
