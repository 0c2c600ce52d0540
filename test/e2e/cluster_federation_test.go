package e2e

import (
	"bufio"
	"errors"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	nomad "github.com/hashicorp/nomad/api"
	"github.com/stretchr/testify/require"

	"github.com/troupe-dev/troupe/api"
	"github.com/troupe-dev/troupe/cluster/clustertest"
)

// wanPort is the servers' WAN pool port (agent.DefaultWANPort).
const wanPort = 4650

// federation is two regions of one clustertest cluster: east (hosts 0-3)
// and west (hosts 4-7), 3 servers and a client each.
type federation struct {
	c          *clustertest.Cluster
	east, west *testCluster
}

// startFederation starts both regions; west's servers join east's first
// server over the WAN pool with -retry-join.
func startFederation(t *testing.T) *federation {
	t.Helper()
	dataRoot := t.TempDir()
	c := clustertest.New(t, 8, logDirOption(t)...)
	hosts := c.Hosts()
	f := &federation{c: c}
	f.east = startRegion(t, c, hosts[:4], "east", dataRoot, nil)
	f.west = startRegion(t, c, hosts[4:], "west", dataRoot, []string{"-retry-join", hosts[0].Addr})
	for _, tc := range []*testCluster{f.east, f.west} {
		tc.eventually(t, formTimeout, "region formation", func() (bool, string) { return tc.formed(1) })
	}
	return f
}

// startRegion starts 3 servers (hosts[:3]) and a client (hosts[3]) of
// region; serverArgs go to every server.
func startRegion(t *testing.T, c *clustertest.Cluster, hosts []*clustertest.Host, region, dataRoot string, serverArgs []string) *testCluster {
	t.Helper()
	tc := &testCluster{c: c}
	var addrs []string
	for _, h := range hosts[:3] {
		addrs = append(addrs, h.Addr)
	}
	for i, h := range hosts[:3] {
		args := append([]string{"agent", "-server", "-bootstrap-expect", "3", "-region", region}, serverArgs...)
		for j, addr := range addrs {
			if j != i {
				args = append(args, "-join", addr)
			}
		}
		tc.servers = append(tc.servers, startAgent(t, h, fmt.Sprintf("%s-server%d", region, i), dataRoot, args))
	}
	args := []string{"agent", "-client", "-region", region, "-servers", strings.Join(addrs, ",")}
	tc.clients = append(tc.clients, startAgent(t, hosts[3], region+"-client0", dataRoot, args))
	return tc
}

// regionAPI is a client of agent a whose requests are for region.
func regionAPI(t *testing.T, a *agentProc, region string) *api.Client {
	t.Helper()
	c, err := api.NewClient(&api.Config{Address: a.HTTPAddr(), Region: region,
		HTTPClient: &http.Client{Timeout: 2 * requestTimeout}})
	require.NoError(t, err)
	return c
}

// cutWAN drops every packet between the two regions' hosts (in east's
// namespaces, both ways); heal removes the rules.
func (f *federation) cutWAN(t *testing.T, heal bool) {
	t.Helper()
	op := "-I"
	if heal {
		op = "-D"
	}
	hosts := f.c.Hosts()
	for _, e := range hosts[:4] {
		for _, w := range hosts[4:] {
			for _, rule := range [][]string{{"INPUT", "-s", w.Addr}, {"OUTPUT", "-d", w.Addr}} {
				args := append(append([]string{"-w", "5", op}, rule...), "-j", "DROP")
				out, err := e.Exec(t.Context(), "iptables", args...)
				require.NoError(t, err, "iptables %v in %s: %s", args, e.Name, out)
			}
		}
	}
}

// isNoRegionPath says whether err is the answer for an unreachable region.
func isNoRegionPath(err error, region string) bool {
	var ae *api.APIError
	return errors.As(err, &ae) && ae.StatusCode == http.StatusInternalServerError &&
		strings.Contains(ae.Body, fmt.Sprintf("No path to region %q", region))
}

// TestClusterFederation: two regions joined over the WAN pool. A job
// registered through east for west runs on west's client and is seen from
// both; west's leader killed, west re-elects, east is unaffected and the
// forwarded reads resume; the WAN link cut, each region works alone and
// forwarded requests fail fast naming the region, and after the heal they
// work again. Last, the forwarding overhead: the same read of the job 200
// times through east (?region=west) and directly from west.
func TestClusterFederation(t *testing.T) {
	f := startFederation(t)
	eastS := f.east.server()
	// Every server knows both regions, not only east's first server, which
	// west's servers joined: the others flood-join it in the WAN pool.
	f.east.eventually(t, formTimeout, "both regions known to every server", func() (bool, string) {
		var got [][]string
		ok := true
		for _, s := range append(slices.Clone(f.east.servers), f.west.servers...) {
			regions, err := s.API.Regions().List()
			if err != nil {
				return false, err.Error()
			}
			got = append(got, regions)
			ok = ok && slices.Equal(regions, []string{"east", "west"})
		}
		return ok, fmt.Sprint(got)
	})
	f.east.eventually(t, formTimeout, "server members of both regions with their leaders", func() (bool, string) {
		out, code := f.east.cli(t, eastS, "server members")
		leaders, rows := 0, tableRows(out)
		for _, r := range rows {
			if len(r) > 4 && r[4] == "true" {
				leaders++
			}
		}
		return code == 0 && len(rows) == 6 && leaders == 2, out
	})

	// A job for west, registered through east.
	j := spinJob{ID: "fedjob", Count: 1}
	path := filepath.Join(t.TempDir(), "fedjob.hcl")
	hcl := strings.Replace(j.hcl(), "job \"fedjob\" {\n", "job \"fedjob\" {\n  region = \"west\"\n", 1)
	require.NoError(t, os.WriteFile(path, []byte(hcl), 0o644))
	out, code := f.east.cli(t, eastS, "job run", "-detach", path)
	require.Equal(t, 0, code, out)
	westNode := f.west.nodeIDs(t)["west-client0"]
	f.west.waitRunning(t, "fedjob", 1, settleTimeout, onEachNode(westNode))
	viaEast := regionAPI(t, eastS, "west")
	job, _, err := viaEast.Jobs().Info("fedjob", nil)
	require.NoError(t, err)
	require.Equal(t, "west", job.Region)
	_, _, err = eastS.API.Jobs().Info("fedjob", nil)
	require.Error(t, err, "the job is west's, not east's")
	allocs, _, err := viaEast.Jobs().Allocations("fedjob", nil)
	require.NoError(t, err)
	require.Len(t, running(allocs), 1)
	require.Equal(t, westNode, running(allocs)[0].NodeID)
	out, code = f.east.cli(t, eastS, "job status", "-region", "west", "fedjob")
	require.Equal(t, 0, code, out)
	require.Contains(t, out, "running")

	f.checkStreamsThroughEast(t, eastS, hcl, running(allocs)[0].ID)

	// West's leader dies: west re-elects, east keeps its leader, and the
	// reads through east come back.
	eastLeader := f.east.leader(t)
	westLeader := f.west.leader(t)
	westLeader.Kill(t)
	f.west.eventually(t, formTimeout, "west re-elects", func() (bool, string) {
		l, err := f.west.server().API.Status().Leader()
		return err == nil && l != "" && l != westLeader.RaftAddr(), fmt.Sprintf("leader %q, %v", l, err)
	})
	require.Equal(t, eastLeader, f.east.leader(t), "east's leader changed when west's died")
	f.east.eventually(t, settleTimeout, "forwarded reads resume", func() (bool, string) {
		_, _, err := viaEast.Jobs().Info("fedjob", nil)
		return err == nil, fmt.Sprint(err)
	})

	// The WAN link cut: each region alone, forwarding fails fast.
	f.cutWAN(t, false)
	healed := false
	defer func() {
		if !healed {
			f.cutWAN(t, true)
		}
	}()
	var took time.Duration
	f.east.eventually(t, settleTimeout, "forwarding fails naming west", func() (bool, string) {
		start := time.Now()
		_, _, err := viaEast.Jobs().Info("fedjob", nil)
		took = time.Since(start)
		return isNoRegionPath(err, "west"), fmt.Sprint(err)
	})
	t.Logf("a forwarded read while the WAN is cut failed in %s", took.Round(time.Millisecond))
	require.Less(t, took, 2*requestTimeout, "a forwarded request hung on a cut region")
	_, _, err = eastS.API.Jobs().List(nil)
	require.NoError(t, err, "east alone")
	_, _, err = f.west.server().API.Jobs().Info("fedjob", nil)
	require.NoError(t, err, "west alone")
	f.west.waitRunning(t, "fedjob", 1, settleTimeout, onEachNode(westNode))

	// Healed: forwarding works again.
	f.cutWAN(t, true)
	healed = true
	f.east.eventually(t, formTimeout, "forwarding after the heal", func() (bool, string) {
		_, _, err := viaEast.Jobs().Info("fedjob", nil)
		return err == nil, fmt.Sprint(err)
	})

	measureForwarding(t, eastS, f.west.server(), "fedjob")
}

// measureForwarding logs the latency of 200 reads of job jobID through
// east for west against 200 direct reads from west (figures only).
func measureForwarding(t *testing.T, east, west *agentProc, jobID string) {
	t.Helper()
	hc := &http.Client{Timeout: 2 * requestTimeout}
	read := func(url string) []time.Duration {
		var ds []time.Duration
		for range 200 {
			start := time.Now()
			resp, err := hc.Get(url)
			require.NoError(t, err)
			_ = resp.Body.Close()
			require.Equal(t, http.StatusOK, resp.StatusCode, url)
			ds = append(ds, time.Since(start))
		}
		slices.Sort(ds)
		return ds
	}
	direct := read(west.HTTPAddr() + "/v1/job/" + jobID)
	forwarded := read(east.HTTPAddr() + "/v1/job/" + jobID + "?region=west")
	pct := func(ds []time.Duration, p int) string {
		return strconv.FormatFloat(float64(ds[len(ds)*p/100].Microseconds())/1000, 'f', 2, 64) + "ms"
	}
	t.Logf("forwarding overhead, GET /v1/job/%s x200: direct from west p50 %s p90 %s; through east ?region=west p50 %s p90 %s", jobID,
		pct(direct, 50), pct(direct, 90), pct(forwarded, 50), pct(forwarded, 90))
}

// checkStreamsThroughEast runs, through east for west, an exec session in
// the job's allocation, and a blocking query and the event stream that a
// job update (registered through east too) wakes.
func (f *federation) checkStreamsThroughEast(t *testing.T, east *agentProc, hcl, allocID string) {
	t.Helper()
	out, code := f.east.cli(t, east, "alloc exec", "-region", "west", allocID, "/bin/echo", "hello from west")
	require.Equal(t, 0, code, out)
	require.Contains(t, out, "hello from west")

	viaEast := regionAPI(t, east, "west")
	_, meta, err := viaEast.Jobs().Info("fedjob", nil)
	require.NoError(t, err)
	blocked := make(chan error, 1)
	go func() {
		_, m, err := viaEast.Jobs().Info("fedjob", &api.QueryOptions{WaitIndex: meta.LastIndex, WaitTime: 20 * time.Second})
		if err == nil && m.LastIndex <= meta.LastIndex {
			err = fmt.Errorf("woke at index %d, not past %d", m.LastIndex, meta.LastIndex)
		}
		blocked <- err
	}()
	stream, err := (&http.Client{Timeout: 30 * time.Second}).Get(east.HTTPAddr() + "/v1/event/stream?region=west&topic=Job:fedjob")
	require.NoError(t, err)
	defer stream.Body.Close()
	require.Equal(t, http.StatusOK, stream.StatusCode)

	updated := strings.Replace(hcl, "  region = \"west\"\n", "  region = \"west\"\n  meta {\n    v = \"2\"\n  }\n", 1)
	path := filepath.Join(t.TempDir(), "fedjob-v2.hcl")
	require.NoError(t, os.WriteFile(path, []byte(updated), 0o644))
	out, code = f.east.cli(t, east, "job run", "-detach", path)
	require.Equal(t, 0, code, out)

	select {
	case err := <-blocked:
		require.NoError(t, err, "the blocking query through east")
	case <-time.After(30 * time.Second):
		t.Fatal("the blocking query through east did not wake")
	}
	lines := bufio.NewScanner(stream.Body)
	lines.Buffer(make([]byte, 1<<20), 1<<22)
	for lines.Scan() {
		if strings.Contains(lines.Text(), `"fedjob"`) && strings.Contains(lines.Text(), `"JobRegistered"`) {
			return
		}
	}
	t.Fatalf("the event stream through east ended without the update: %v", lines.Err())
}

// TestClusterACLReplicationAcrossCut: east is authoritative, west
// replicates its ACLs (one server each). A policy and a global token made
// in east while the WAN link is cut reach west once it heals; a local
// token never does. West passes its policy and global token writes on to
// east (and fails them, naming east, while cut off).
func TestClusterACLReplicationAcrossCut(t *testing.T) {
	dataRoot := t.TempDir()
	c := clustertest.New(t, 8, logDirOption(t)...) // hosts 0 (east) and 4 (west), as cutWAN splits them
	f := &federation{c: c, east: &testCluster{c: c}, west: &testCluster{c: c}}
	hosts := c.Hosts()
	aclArgs := []string{"agent", "-server", "-bootstrap-expect", "1", "-acl-enabled", "-acl-replication-interval", "200ms"}
	east := startAgent(t, hosts[0], "east-server0", dataRoot, append(aclArgs, "-region", "east"))
	f.east.servers = []*agentProc{east}
	waitLeader := func(tc *testCluster) {
		tc.eventually(t, formTimeout, "a leader", func() (bool, string) {
			l, err := tc.server().API.Status().Leader()
			return err == nil && l != "", fmt.Sprint(err)
		})
	}
	waitLeader(f.east)
	ec := nomadClient(t, east)
	var root *nomad.ACLToken
	f.east.eventually(t, formTimeout, "ACL bootstrap", func() (bool, string) {
		var err error
		root, _, err = ec.ACLTokens().Bootstrap(nil)
		return err == nil, fmt.Sprint(err)
	})
	ec.SetSecretID(root.SecretID)
	west := startAgent(t, hosts[4], "west-server0", dataRoot, append(aclArgs, "-region", "west",
		"-authoritative-region", "east", "-acl-replication-token", root.SecretID, "-retry-join", hosts[0].Addr))
	f.west.servers = []*agentProc{west}
	waitLeader(f.west)
	wc := nomadClient(t, west)
	wc.SetSecretID(root.SecretID)
	f.west.eventually(t, formTimeout, "the bootstrap token reaches west", func() (bool, string) {
		_, _, err := wc.ACLPolicies().List(nil)
		return err == nil, fmt.Sprint(err)
	})

	f.cutWAN(t, false)
	_, err := ec.ACLPolicies().Upsert(&nomad.ACLPolicy{Name: "during-cut", Rules: `namespace "default" { policy = "read" }`}, nil)
	require.NoError(t, err, "east works alone")
	global, _, err := ec.ACLTokens().Create(&nomad.ACLToken{Name: "g", Type: "client", Policies: []string{"during-cut"}, Global: true}, nil)
	require.NoError(t, err)
	local, _, err := ec.ACLTokens().Create(&nomad.ACLToken{Name: "l", Type: "client", Policies: []string{"during-cut"}}, nil)
	require.NoError(t, err)
	_, _, err = wc.Jobs().List(nil)
	require.NoError(t, err, "west works alone")
	_, _, err = wc.ACLPolicies().Info("during-cut", nil)
	require.Error(t, err, "west cannot have it while cut off")
	_, err = wc.ACLPolicies().Upsert(&nomad.ACLPolicy{Name: "west-during-cut", Rules: `namespace "default" { policy = "read" }`}, nil)
	require.ErrorContains(t, err, `No path to region "east"`, "west passes a policy write on to east, which it cannot reach")
	_, _, err = wc.ACLPolicies().Info("west-during-cut", nil)
	require.Error(t, err, "and commits nothing itself")

	f.cutWAN(t, true)
	f.west.eventually(t, formTimeout, "west catches up after the heal", func() (bool, string) {
		_, _, err := wc.ACLPolicies().Info("during-cut", nil)
		if err != nil {
			return false, err.Error()
		}
		_, _, err = wc.ACLTokens().Info(global.AccessorID, nil)
		return err == nil, fmt.Sprint(err)
	})
	_, _, err = wc.ACLTokens().Info(local.AccessorID, nil)
	require.Error(t, err, "a local token stays in east")

	// Writes through west are east's: committed there at once, and back in
	// west at its next pull; a local token made through west stays there.
	f.west.eventually(t, formTimeout, "a policy applied through west", func() (bool, string) {
		_, err := wc.ACLPolicies().Upsert(&nomad.ACLPolicy{Name: "via-west", Rules: `namespace "default" { policy = "read" }`}, nil)
		return err == nil, fmt.Sprint(err)
	})
	_, _, err = ec.ACLPolicies().Info("via-west", nil)
	require.NoError(t, err, "a policy applied through west is committed in east")
	viaWest, _, err := wc.ACLTokens().Create(&nomad.ACLToken{Name: "gw", Type: "client", Policies: []string{"via-west"}, Global: true}, nil)
	require.NoError(t, err)
	_, _, err = ec.ACLTokens().Info(viaWest.AccessorID, nil)
	require.NoError(t, err, "a global token made through west is committed in east")
	f.west.eventually(t, formTimeout, "west's pull brings them back", func() (bool, string) {
		_, _, err := wc.ACLPolicies().Info("via-west", nil)
		if err != nil {
			return false, err.Error()
		}
		_, _, err = wc.ACLTokens().Info(viaWest.AccessorID, nil)
		return err == nil, fmt.Sprint(err)
	})
	localWest, _, err := wc.ACLTokens().Create(&nomad.ACLToken{Name: "lw", Type: "client", Policies: []string{"via-west"}}, nil)
	require.NoError(t, err)
	_, _, err = wc.ACLTokens().Info(localWest.AccessorID, nil)
	require.NoError(t, err, "a local token made through west is committed there")
	_, _, err = ec.ACLTokens().Info(localWest.AccessorID, nil)
	require.Error(t, err, "and never reaches east")
}
