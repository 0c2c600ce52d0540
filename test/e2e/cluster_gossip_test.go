package e2e

import (
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/troupe-dev/troupe/agent"
)

// TestClusterGossipEncrypted: 3 servers and a client that share an
// -encrypt key form a cluster (the client registers through encrypted
// gossip); an agent with another key that joins from the client's host
// is never seen by the servers, nor sees them.
func TestClusterGossipEncrypted(t *testing.T) {
	key, err := agent.NewGossipKey()
	require.NoError(t, err)
	dataRoot := t.TempDir()
	tc := startAgentsTuned(t, dataRoot, 3, 1, append(slices.Clone(clusterTuning), "-encrypt", key))
	host := tc.clients[0].Host
	tc.clients[0].Kill(t)

	other, err := agent.NewGossipKey()
	require.NoError(t, err)
	stranger := startAgentTuned(t, host, "stranger", dataRoot,
		[]string{"agent", "-server", "-join", tc.servers[0].Host.Addr}, append(slices.Clone(clusterTuning), "-encrypt", other))
	tc.eventually(t, settleTimeout, "the stranger answers", func() (bool, string) {
		_, err := stranger.API.Agent().Members()
		return err == nil, fmt.Sprint(err)
	})
	require.Never(t, func() bool {
		for _, a := range []*agentProc{tc.servers[0], stranger} {
			members, err := a.API.Agent().Members()
			if err != nil {
				continue
			}
			names := map[string]bool{}
			for _, m := range members.Members {
				name, _, _ := strings.Cut(m.Name, ".") // "server0.global"
				names[name] = m.Status == "alive"
			}
			if a == stranger && (names["server0"] || names["server1"]) {
				return true
			}
			if a != stranger && names["stranger"] {
				return true
			}
		}
		return false
	}, 5*time.Second, 100*time.Millisecond, "gossip with another key is never understood")
}
