package safepath

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"
)

func TestReadInStaysBeneathBase(t *testing.T) {
	base := t.TempDir()
	outside := t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(outside, "secret"), []byte("secret"), 0o600))
	require.NoError(t, os.MkdirAll(filepath.Join(base, "task", "local"), 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(base, "task", "local", "f"), []byte("in"), 0o644))
	require.NoError(t, os.Symlink(outside, filepath.Join(base, "task", "out")))
	require.NoError(t, os.Symlink("/etc/passwd", filepath.Join(base, "passwd")))
	require.NoError(t, os.Symlink("local/f", filepath.Join(base, "task", "in")))

	for _, tt := range []struct {
		rel     string
		outside bool
	}{
		{"task/local/f", false}, {"/task/local/f", false}, {"task/in", false}, {"task/../task/local/f", false},
		{"../x", true}, {"../../etc/passwd", true}, {"task/../../x", true},
		{"task/out/secret", true}, {"passwd", true},
	} {
		t.Run(tt.rel, func(t *testing.T) {
			f, err := OpenIn(base, tt.rel)
			_, serr := StatIn(base, tt.rel)
			if tt.outside {
				require.ErrorIs(t, err, ErrOutside)
				require.ErrorIs(t, serr, ErrOutside)
				require.Nil(t, f)
				return
			}
			require.NoError(t, err)
			require.NoError(t, serr)
			f.Close()
		})
	}
	fi, err := LstatIn(base, "passwd")
	require.NoError(t, err)
	require.NotZero(t, fi.Mode()&os.ModeSymlink)
	c, err := CleanRel("/")
	require.NoError(t, err)
	require.Equal(t, ".", c)
	_, err = CleanRel("a\x00b")
	require.ErrorIs(t, err, ErrUnsafeName)
}
