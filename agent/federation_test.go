package agent

import (
	"context"
	"net/http"
	"strconv"
	"testing"
	"time"

	nomad "github.com/hashicorp/nomad/api"
	"github.com/stretchr/testify/require"
)

// skipTwoAgentsUnderRace skips a test that runs two agents in this
// process when the race detector is on: protoactor's remote.Start sets
// grpc's process-wide logger (grpclog.SetLoggerV2) while the first
// agent's gRPC server reads it, a race of the library's in any process
// with two transports (an agent runs one). scripts/test.sh runs these
// tests again without -race; test/e2e runs the same scenarios with one
// agent per process.
func skipTwoAgentsUnderRace(t *testing.T) {
	t.Helper()
	if raceDetector {
		t.Skip("two agents in one process race on grpc's global logger (protoactor remote.Start); scripts/test.sh runs this without -race")
	}
}

// startRegionServer starts a single clustered server of region on
// loopback, its ports free.
func startRegionServer(t *testing.T, region string, opts ...func(*Config)) *Agent {
	t.Helper()
	cfg := testConfig(t, t.TempDir())
	for _, o := range opts {
		o(cfg)
	}
	cfg.Client, cfg.Region, cfg.NodeName = false, region, region+"-server"
	cfg.BindAddr, cfg.BootstrapExpect = "127.0.0.1", 1
	cfg.RPCPort, cfg.GossipPort, cfg.RaftPort, cfg.WANPort = freePort(t), freePort(t), freePort(t), freePort(t)
	cfg.GossipInterval = 50 * time.Millisecond
	a, err := New(cfg)
	require.NoError(t, err)
	require.NoError(t, a.Start())
	t.Cleanup(func() { _ = a.Shutdown() })
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	require.NoError(t, a.WaitLeader(ctx))
	return a
}

// TestFederationWithNomadClient: two one-server regions, joined over the
// WAN pool with Nomad's client (PUT /v1/agent/join); Nomad's client then
// lists both regions, reads the other region through either server and
// registers a job for "eu" through the "global" server, which lands in
// eu's state only.
func TestFederationWithNomadClient(t *testing.T) {
	skipTwoAgentsUnderRace(t)
	global, eu := startRegionServer(t, "global"), startRegionServer(t, "eu")
	client := func(a *Agent, region string) *nomad.Client {
		c, err := nomad.NewClient(&nomad.Config{Address: "http://" + a.HTTPAddr(), Region: region,
			HttpClient: &http.Client{Timeout: 10 * time.Second}})
		require.NoError(t, err)
		return c
	}
	n, err := client(eu, "").Agent().Join("127.0.0.1:" + strconv.Itoa(global.cfg.WANPort))
	require.NoError(t, err)
	require.Equal(t, 1, n)
	require.Eventually(t, func() bool {
		regions, err := client(global, "").Regions().List()
		return err == nil && len(regions) == 2 && regions[0] == "eu" && regions[1] == "global"
	}, 10*time.Second, 20*time.Millisecond)
	members, err := client(global, "").Agent().Members()
	require.NoError(t, err)
	require.Len(t, members.Members, 2, "both regions' servers")

	job := nomad.NewBatchJob("far", "far", "eu", 50)
	job.Datacenters = []string{"nowhere"}
	job.AddTaskGroup(nomad.NewTaskGroup("g", 1).AddTask(nomad.NewTask("t", "exec").SetConfig("command", "/bin/true")))
	_, _, err = client(global, "").Jobs().Register(job, nil)
	require.NoError(t, err)
	require.NotNil(t, eu.Store().Snapshot().JobByID("default", "far"), "registered in eu")
	require.Nil(t, global.Store().Snapshot().JobByID("default", "far"), "not in global")

	got, _, err := client(global, "eu").Jobs().Info("far", nil)
	require.NoError(t, err)
	require.Equal(t, "eu", *got.Region)
	_, _, err = client(global, "mars").Jobs().List(nil)
	require.ErrorContains(t, err, `No path to region "mars"`)
}
