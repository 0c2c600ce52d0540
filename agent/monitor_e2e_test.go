package agent

import (
	"strings"
	"testing"
	"time"

	nomad "github.com/hashicorp/nomad/api"
	"github.com/stretchr/testify/require"
)

// TestMonitorStreamsLineLoggedAfterConnect: Nomad's client's
// Agent().Monitor gets a debug line the agent logs after it connected
// (the agent itself logs nothing: its own handler discards), as JSON.
func TestMonitorStreamsLineLoggedAfterConnect(t *testing.T) {
	a := startAgent(t, testConfig(t, t.TempDir()))
	defer a.Shutdown()
	c, err := nomad.NewClient(&nomad.Config{Address: "http://" + a.HTTPAddr()})
	require.NoError(t, err)
	stop := make(chan struct{})
	defer close(stop)
	frames, errs := c.Agent().Monitor(stop, &nomad.QueryOptions{Params: map[string]string{"log_level": "debug", "log_json": "true"}})
	a.log.With("actor", "test").Debug("monitor marker", "n", 7)
	deadline := time.After(10 * time.Second)
	for {
		select {
		case f := <-frames:
			require.NotNil(t, f)
			if strings.Contains(string(f.Data), "monitor marker") {
				require.Contains(t, string(f.Data), `"level":"DEBUG","msg":"monitor marker","actor":"test","n":7`)
				return
			}
		case err := <-errs:
			t.Fatalf("monitor ended: %v", err)
		case <-deadline:
			t.Fatal("the line logged after connecting never came")
		}
	}
}
