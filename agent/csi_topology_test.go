package agent

import (
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/troupe-dev/troupe/runtime/csi/hostpath"
)

// TestProbeCSIKeepsNodeTopology: the fingerprint of a node plugin carries
// the accessible topology NodeGetInfo reported (NodeInfo.AccessibleTopology,
// as Nomad shows it), and none for a plugin without one.
func TestProbeCSIKeepsNodeTopology(t *testing.T) {
	cases := []struct {
		name     string
		topology map[string]string
	}{
		{"zone", map[string]string{"zone": "a", "rack": "r1"}},
		{"none", nil},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			dir, err := os.MkdirTemp("", "ptopo")
			require.NoError(t, err)
			t.Cleanup(func() { _ = os.RemoveAll(dir) })
			p, err := hostpath.New(hostpath.Config{Root: filepath.Join(dir, "vols"), NodeID: "n1", Topology: c.topology})
			require.NoError(t, err)
			sock := filepath.Join(dir, "csi.sock")
			require.NoError(t, p.Start(context.Background(), sock))
			t.Cleanup(p.Stop)
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			defer cancel()
			ctrl, node, err := probeCSI(ctx, sock, "hostpath", "monolith")
			require.NoError(t, err)
			require.Equal(t, len(c.topology) > 0, node.GetRequiresTopologies())
			require.Equal(t, c.topology, node.GetNodeInfo().GetAccessibleTopology().GetSegments())
			require.Nil(t, ctrl.GetNodeInfo())
		})
	}
}
