package e2e

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestVolumeRegisterCLI registers a CSI volume from an HCL spec with the
// CLI, shows it, and removes it; a spec without a plugin is refused.
func TestVolumeRegisterCLI(t *testing.T) {
	a := startDevAgent(t)
	dir := t.TempDir()
	spec := filepath.Join(dir, "vol.hcl")
	require.NoError(t, os.WriteFile(spec, []byte(`id          = "vol1"
name        = "vol1"
type        = "csi"
external_id = "ext-vol1"
plugin_id   = "hostpath"

capability {
  access_mode     = "single-node-writer"
  attachment_mode = "file-system"
}
`), 0o644))
	out, code := a.troupe(t, "volume", "register", spec)
	require.Equal(t, 0, code, out)
	out, code = a.troupe(t, "volume", "status")
	require.Equal(t, 0, code, out)
	require.Regexp(t, `vol1\s+vol1\s+hostpath\s+false`, out)
	out, code = a.troupe(t, "volume", "status", "vol1")
	require.Equal(t, 0, code, out)
	require.Regexp(t, `(?m)^External ID\s+= ext-vol1$`, out)

	bad := filepath.Join(dir, "bad.hcl")
	require.NoError(t, os.WriteFile(bad, []byte("id = \"vol2\"\nname = \"vol2\"\ntype = \"csi\"\nexternal_id = \"e\"\n\ncapability {\n  access_mode     = \"single-node-writer\"\n  attachment_mode = \"file-system\"\n}\n"), 0o644))
	out, code = a.troupe(t, "volume", "register", bad)
	require.NotEqual(t, 0, code, out)
	require.Contains(t, out, "plugin_id")

	out, code = a.troupe(t, "volume", "deregister", "vol1")
	require.Equal(t, 0, code, out)
	out, _ = a.troupe(t, "volume", "status")
	require.NotContains(t, out, "vol1")
	out, code = a.troupe(t, "plugin", "status")
	require.Equal(t, 0, code, out)
}
