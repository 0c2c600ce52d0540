//go:build linux

package exec

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/troupe-dev/troupe/runtime/driver"
)

func TestBuildSpec(t *testing.T) {
	cfg := shellConfig("/alloc/web", "a/web", "true")
	cfg.Env = map[string]string{"B": "2", "A": "1"}
	cfg.StderrPath = ""
	spec, err := buildSpec(cfg)
	require.NoError(t, err)
	require.Equal(t, "/bin/sh", spec.Command)
	require.Equal(t, []string{"-c", "true"}, spec.Args)
	require.Equal(t, []string{"A=1", "B=2", "PATH=" + defaultPath}, spec.Env)
	require.Equal(t, os.DevNull, spec.StderrPath)
	require.Equal(t, filepath.Join("/alloc/web", stateDirName), spec.StateDir)
}

func TestStringList(t *testing.T) {
	tests := []struct {
		name string
		in   any
		want []string
		err  bool
	}{
		{name: "nil", in: nil, want: nil},
		{name: "structpb list", in: []any{"a", "b"}, want: []string{"a", "b"}},
		{name: "strings", in: []string{"a"}, want: []string{"a"}},
		{name: "number element", in: []any{"a", 1.0}, err: true},
		{name: "not a list", in: "a b", err: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := stringList(tt.in)
			if tt.err {
				require.Error(t, err)
				return
			}
			require.NoError(t, err)
			require.Equal(t, tt.want, got)
		})
	}
}

func TestReadExit(t *testing.T) {
	dir := t.TempDir()
	r := readExit(dir)
	require.ErrorIs(t, r.Err, ErrExecutorLost)
	require.NoError(t, writeJSONAtomic(dir, filepath.Join(dir, exitFileName), &exitFile{ExitCode: 137, Signal: 9}))
	r = readExit(dir)
	require.Equal(t, driver.ExitResult{ExitCode: 137, Signal: 9}, *r)
	require.NoError(t, writeJSONAtomic(dir, filepath.Join(dir, exitFileName), &exitFile{ExitCode: -1, StartError: "nope"}))
	require.ErrorIs(t, readExit(dir).Err, ErrTaskStart)
	entries, err := os.ReadDir(dir)
	require.NoError(t, err)
	require.Len(t, entries, 1, "no temp files left behind")
}

func TestProcStat(t *testing.T) {
	state, ticks, err := ProcStat(os.Getpid())
	require.NoError(t, err)
	require.Contains(t, "RS", string(state))
	require.NotZero(t, ticks)
	require.True(t, alive(os.Getpid(), ticks))
	require.False(t, alive(os.Getpid(), ticks+1), "another start time is another process")
	_, _, err = ProcStat(-1)
	require.Error(t, err)
}

func TestHostPaths(t *testing.T) {
	env := []string{"A=/alloc", "B=/local/x", "C=/secrets", "D=/localx", "E=/tmp", "F=x=/alloc"}
	gotEnv, gotArgs := hostPaths(env, []string{"-jar", "/local/app.jar", "/localx", "/alloc/data"}, "/a/alloc", "/a/t")
	require.Equal(t, []string{"A=/a/alloc", "B=/a/t/local/x", "C=/a/t/secrets", "D=/localx", "E=/tmp", "F=x=/alloc"}, gotEnv)
	require.Equal(t, []string{"-jar", "/a/t/local/app.jar", "/localx", "/a/alloc/data"}, gotArgs)
}
