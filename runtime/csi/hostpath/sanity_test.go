package hostpath

import (
	"context"
	"path/filepath"
	"testing"

	"github.com/kubernetes-csi/csi-test/v5/pkg/sanity"
	"github.com/stretchr/testify/require"
)

// TestCSISanity runs the CSI conformance suite (csi-sanity) against the
// plugin over its real unix socket: identity, controller and node
// services, with real bind mounts when run as root.
func TestCSISanity(t *testing.T) {
	dir := t.TempDir()
	p, err := New(Config{Root: filepath.Join(dir, "vols"), NodeID: "sanity-node", Nodes: []string{"sanity-node"},
		UnpublishUnknownOK: true})
	require.NoError(t, err)
	sock := filepath.Join(shortDir(t), "csi.sock")
	require.NoError(t, p.Start(context.Background(), sock))
	t.Cleanup(p.Stop)

	cfg := sanity.NewTestConfig()
	cfg.Address = "unix://" + sock
	cfg.TargetPath = filepath.Join(dir, "target")
	cfg.StagingPath = filepath.Join(dir, "staging")
	cfg.TestVolumeSize = 10 << 20
	sanity.Test(t, cfg)
}
