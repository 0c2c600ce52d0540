package safepath

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

func TestCheckName(t *testing.T) {
	tests := []struct {
		name string
		in   string
		why  string // "" = accepted
	}{
		{"plain", "web", ""},
		{"dots inside", "a..b", ""},
		{"leading dot", ".hidden", ""},
		{"unicode", "tâche", ""},
		{"longest", strings.Repeat("a", MaxName), ""},
		{"empty", "", "empty"},
		{"dot", ".", "not a plain name"},
		{"dotdot", "..", "not a plain name"},
		{"escape", "../../../../tmp/x-escaped-task", "path separator"},
		{"slash", "a/b", "path separator"},
		{"trailing slash", "a/", "path separator"},
		{"absolute", "/etc", "path separator"},
		{"nul", "a\x00b", "NUL"},
		{"too long", strings.Repeat("a", MaxName+1), "bytes long"},
		{"1 MiB", strings.Repeat("x", 1<<20), "bytes long"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := CheckName("task", tt.in)
			if tt.why == "" {
				require.NoError(t, err)
				return
			}
			require.ErrorIs(t, err, ErrUnsafeName)
			require.Contains(t, err.Error(), tt.why)
			require.Contains(t, err.Error(), "task ")
			require.Less(t, len(err.Error()), 300, "the message quotes only the start of a long name")
		})
	}
}

func TestJoin(t *testing.T) {
	tests := []struct {
		name  string
		elems []string
		want  string // "" = refused
	}{
		{"one", []string{"a"}, "/base/a"},
		{"two", []string{"a", "stdout"}, "/base/a/stdout"},
		{"none", nil, "/base"},
		{"dotdot", []string{".."}, ""},
		{"dot", []string{"a", "."}, ""},
		{"escape", []string{"../../../../tmp/x"}, ""},
		{"separator", []string{"a/b"}, ""},
		{"empty", []string{"a", ""}, ""},
		{"nul", []string{"a\x00"}, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := Join("/base", tt.elems...)
			if tt.want == "" {
				require.ErrorIs(t, err, ErrUnsafeName)
				return
			}
			require.NoError(t, err)
			require.Equal(t, tt.want, got)
		})
	}
}

func TestRel(t *testing.T) {
	tests := []struct {
		path string
		want string // "" = outside
	}{
		{"/base", "."},
		{"/base/a/b", "a/b"},
		{"/base/a/../b", "b"},
		{"/base/..", ""},
		{"/base/../base2/x", ""},
		{"/tmp/x", ""},
		{"relative", ""},
	}
	for _, tt := range tests {
		t.Run(tt.path, func(t *testing.T) {
			got, err := Rel("/base", tt.path)
			if tt.want == "" {
				require.ErrorIs(t, err, ErrOutside)
				require.False(t, Within("/base", tt.path))
				return
			}
			require.NoError(t, err)
			require.Equal(t, tt.want, got)
			require.True(t, Within("/base", tt.path))
		})
	}
}

// snapshot lists every entry under dir with its mode and size.
func snapshot(t *testing.T, dir string) map[string]string {
	t.Helper()
	out := map[string]string{}
	require.NoError(t, filepath.Walk(dir, func(p string, fi os.FileInfo, err error) error {
		if err != nil {
			return err
		}
		out[p] = fmt.Sprintf("%s %d", fi.Mode(), fi.Size())
		return nil
	}))
	return out
}

// plant makes base with a/ in it and a sentinel dir outside with one file,
// and returns them.
func plant(t *testing.T) (base, outside string) {
	t.Helper()
	top := t.TempDir()
	base, outside = filepath.Join(top, "base"), filepath.Join(top, "outside")
	require.NoError(t, os.MkdirAll(filepath.Join(base, "a"), 0o755))
	require.NoError(t, os.MkdirAll(outside, 0o700))
	require.NoError(t, os.WriteFile(filepath.Join(outside, "keep"), []byte("k"), 0o600))
	return base, outside
}

func TestSymlinksOutAreRefused(t *testing.T) {
	tests := []struct {
		name string
		// link is made at base/<link> pointing at outside (dir) or
		// outside/keep (file)
		link   string
		toFile bool
		op     func(base string) error
	}{
		{"mkdir through a linked dir", "a/local", false, func(b string) error {
			return MkdirAll(b, filepath.Join(b, "a/local/sub"), 0o755)
		}},
		{"mkdir at a linked task dir", "t", false, func(b string) error {
			return MkdirAll(b, filepath.Join(b, "t/.executor"), 0o700)
		}},
		{"create through a linked dir", "a/local", false, func(b string) error {
			f, err := OpenFile(b, filepath.Join(b, "a/local/new"), os.O_CREATE|os.O_WRONLY, 0o644)
			if err == nil {
				f.Close()
			}
			return err
		}},
		{"append to a linked file", "a/stdout", true, func(b string) error {
			f, err := OpenFile(b, filepath.Join(b, "a/stdout"), os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
			if err == nil {
				_, _ = f.WriteString("x")
				f.Close()
			}
			return err
		}},
		{"write through a linked dir", "a/local", false, func(b string) error {
			return WriteFileAtomic(b, filepath.Join(b, "a/local/pid.json"), []byte("{}"), 0o600)
		}},
		{"remove through a linked dir", "a/local", false, func(b string) error {
			return RemoveAll(b, filepath.Join(b, "a/local/keep"))
		}},
		{"lstat through a linked dir", "a/local", false, func(b string) error {
			_, err := Lstat(b, filepath.Join(b, "a/local/keep"))
			return err
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			base, outside := plant(t)
			target := outside
			if tt.toFile {
				target = filepath.Join(outside, "keep")
			}
			require.NoError(t, os.Symlink(target, filepath.Join(base, tt.link)))
			before := snapshot(t, outside)
			require.Error(t, tt.op(base))
			require.Equal(t, before, snapshot(t, outside), "nothing outside changed")
			data, err := os.ReadFile(filepath.Join(outside, "keep"))
			require.NoError(t, err)
			require.Equal(t, "k", string(data))
		})
	}
}

func TestOutsidePathsAreRefused(t *testing.T) {
	base, outside := plant(t)
	before := snapshot(t, outside)
	require.ErrorIs(t, MkdirAll(base, filepath.Join(base, "../outside/x"), 0o755), ErrOutside)
	_, err := OpenFile(base, filepath.Join(outside, "y"), os.O_CREATE|os.O_WRONLY, 0o644)
	require.ErrorIs(t, err, ErrOutside)
	require.ErrorIs(t, RemoveAll(base, outside), ErrOutside)
	require.Error(t, RemoveAll(base, base), "the base itself is not removed")
	require.Equal(t, before, snapshot(t, outside))
	require.DirExists(t, base)
}

func TestRemoveAllRemovesLinksNotTargets(t *testing.T) {
	base, outside := plant(t)
	require.NoError(t, os.Symlink(outside, filepath.Join(base, "a", "local")))
	require.NoError(t, os.WriteFile(filepath.Join(base, "a", "stdout"), []byte("log"), 0o644))
	top := filepath.Join(base, "linked")
	require.NoError(t, os.Symlink(outside, top))
	before := snapshot(t, outside)

	require.NoError(t, RemoveAll(base, top), "a linked top is removed as a link")
	require.NoError(t, RemoveAll(base, filepath.Join(base, "a")))
	require.NoError(t, RemoveAll(base, filepath.Join(base, "missing")))

	require.NoDirExists(t, filepath.Join(base, "a"))
	_, err := os.Lstat(top)
	require.ErrorIs(t, err, os.ErrNotExist)
	require.Equal(t, before, snapshot(t, outside))
}

func TestInsideWorks(t *testing.T) {
	base, _ := plant(t)
	// a symlink that stays beneath base is followed
	require.NoError(t, os.Symlink("a", filepath.Join(base, "alias")))
	require.NoError(t, MkdirAll(base, filepath.Join(base, "alias/b/c"), 0o750))
	fi, err := os.Stat(filepath.Join(base, "a/b/c"))
	require.NoError(t, err)
	require.True(t, fi.IsDir())

	require.NoError(t, WriteFileAtomic(base, filepath.Join(base, "a/b/f.json"), []byte("1"), 0o600))
	require.NoError(t, WriteFileAtomic(base, filepath.Join(base, "a/b/f.json"), []byte("2"), 0o600))
	data, err := os.ReadFile(filepath.Join(base, "a/b/f.json"))
	require.NoError(t, err)
	require.Equal(t, "2", string(data))
	entries, err := os.ReadDir(filepath.Join(base, "a/b"))
	require.NoError(t, err)
	require.Len(t, entries, 2, "no temp file left behind")

	f, err := OpenFile(base, filepath.Join(base, "a/log"), os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	require.NoError(t, err)
	require.NoError(t, f.Close())
	fi, err = Lstat(base, filepath.Join(base, "alias"))
	require.NoError(t, err)
	require.NotZero(t, fi.Mode()&os.ModeSymlink)
}

// TestOpenFileRefusesLinksInsideToo: a link at the file itself is refused
// even when it points inside base (a task's stdout linked to another
// task's secrets), and so is a directory or fifo where a file should be;
// a plain file opens.
func TestOpenFileRefusesLinksInsideToo(t *testing.T) {
	base := t.TempDir()
	require.NoError(t, os.MkdirAll(filepath.Join(base, "t"), 0o755))
	require.NoError(t, os.MkdirAll(filepath.Join(base, "other", "secrets"), 0o700))
	secret := filepath.Join(base, "other", "secrets", "token")
	require.NoError(t, os.WriteFile(secret, []byte("s3cret"), 0o600))
	require.NoError(t, os.Symlink("../other/secrets/token", filepath.Join(base, "t", "stdout")))
	require.NoError(t, os.Mkdir(filepath.Join(base, "t", "stderr"), 0o755))

	_, err := OpenFile(base, filepath.Join(base, "t", "stdout"), os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	require.ErrorIs(t, err, ErrSymlink)
	_, err = OpenFile(base, filepath.Join(base, "t", "stderr"), os.O_RDONLY, 0)
	require.ErrorIs(t, err, ErrSymlink, "a directory is not a log file")
	b, err := os.ReadFile(secret)
	require.NoError(t, err)
	require.Equal(t, "s3cret", string(b))

	f, err := OpenFile(base, filepath.Join(base, "t", "plain"), os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	require.NoError(t, err)
	_, err = f.WriteString("ok")
	require.NoError(t, err)
	require.NoError(t, f.Close())
}
