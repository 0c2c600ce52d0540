//go:build linux

package exec

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestIsolatedTaskSecretsSeeded: what the client wrote in the task's
// secrets dir (a workload identity file, a template in a sub dir) is in
// the task's /secrets tmpfs, owned by the task's user with its mode; a
// link there is not followed.
func TestIsolatedTaskSecretsSeeded(t *testing.T) {
	requireRoot(t, "isolation")
	cfg, base := isolated(t, `cat /secrets/nomad_token; echo; stat -c '%a %u' /secrets/nomad_token
cat /secrets/sub/db.env; ls /secrets/link 2>/dev/null || echo no-link
echo task > /secrets/own && echo wrote-own`)
	secrets := filepath.Join(cfg.TaskDir, "secrets")
	require.NoError(t, os.MkdirAll(filepath.Join(secrets, "sub"), 0o700))
	require.NoError(t, os.WriteFile(filepath.Join(secrets, "nomad_token"), []byte("jwt.of.task"), 0o600))
	require.NoError(t, os.WriteFile(filepath.Join(secrets, "sub", "db.env"), []byte("DB=1\n"), 0o644))
	outside := filepath.Join(base, "outside")
	require.NoError(t, os.WriteFile(outside, []byte("host only"), 0o644))
	require.NoError(t, os.Symlink(outside, filepath.Join(secrets, "link")))

	out, _ := runIsolated(t, newDriver(t), cfg)
	require.Equal(t, "jwt.of.task\n600 65534\nDB=1\nno-link\nwrote-own\n", out)
	_, err := os.Stat(filepath.Join(secrets, "own"))
	require.True(t, os.IsNotExist(err), "the task's /secrets is its tmpfs, not the host dir")
}
