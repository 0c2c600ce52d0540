package e2e

import (
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/troupe-dev/troupe/cluster/clustertest"
)

// TestClusterRefusesBadJoins: a server of another region is refused by
// gossip, and a client pointed at an agent that is not a server says so;
// neither changes the cluster.
func TestClusterRefusesBadJoins(t *testing.T) {
	dataRoot := t.TempDir()
	c := clustertest.New(t, 3, logDirOption(t)...)
	h := c.Hosts()
	global := startAgent(t, h[0], "global0", dataRoot, []string{"agent", "-server", "-bootstrap-expect", "1"})
	other := startAgent(t, h[1], "eu0", dataRoot, []string{"agent", "-server", "-bootstrap-expect", "1", "-region", "eu", "-join", h[0].Addr})
	lost := startAgent(t, h[2], "lost0", dataRoot, []string{"agent", "-client", "-servers", h[2].Addr})

	waitLog := func(a *agentProc, want string) {
		t.Helper()
		deadline := time.Now().Add(settleTimeout)
		for time.Now().Before(deadline) {
			if log, _ := a.Proc.Log(); strings.Contains(log, want) {
				return
			}
			select {
			case <-a.Proc.Done():
				t.Fatalf("agent %s exited", a.Name)
			case <-time.After(pollEvery):
			}
		}
		log, _ := a.Proc.Log()
		t.Fatalf("agent %s never logged %q; log tail:\n%s", a.Name, want, tail(log, 40))
	}
	waitLog(other, "wrong region: node global0 is in region global, this cluster is eu")
	waitLog(lost, "is not a troupe server")

	members, err := global.API.Agent().Members()
	require.NoError(t, err)
	var names []string
	for _, m := range members.Members {
		names = append(names, m.Name)
	}
	require.Equal(t, []string{"global0.global"}, names, "the eu server must not join")
	nodes, _, err := global.API.Nodes().List(nil)
	require.NoError(t, err)
	require.Empty(t, nodes, "the misdirected client must not register anywhere")
}
