package main

import (
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"github.com/troupe-dev/troupe/httpapi"
)

// fsDirBackend serves every allocation's files from one dir through the
// real alloc fs routes.
type fsDirBackend struct {
	httpapi.Backend
	dir string
}

func (b *fsDirBackend) AllocDirFor(string) (string, string, error) { return b.dir, "", nil }
func (b *fsDirBackend) Leader() string                             { return "10.0.0.1:4647" }
func (b *fsDirBackend) LeaderHTTP() string                         { return "" }
func (b *fsDirBackend) Now() time.Time                             { return testNow }

// withAllocDir puts the real alloc fs routes, on dir, in front of the
// fake API.
func withAllocDir(t *testing.T, f *fakeAPI, dir string) {
	fsAPI := httpapi.New(&fsDirBackend{dir: dir}, nil, httpapi.Options{})
	fake := f.srv.Config.Handler
	front := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if strings.HasPrefix(r.URL.Path, "/v1/client/fs/") && !strings.HasPrefix(r.URL.Path, "/v1/client/fs/logs/") {
			fsAPI.ServeHTTP(w, r)
			return
		}
		fake.ServeHTTP(w, r)
	}))
	t.Cleanup(front.Close)
	f.srv = front
}

func TestAllocFS(t *testing.T) {
	f := newFakeAPI(t)
	f.allocs[allocID] = sampleAlloc()
	dir := t.TempDir()
	require.NoError(t, os.MkdirAll(filepath.Join(dir, "server", "local"), 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(dir, "server", "out.txt"), []byte("one\ntwo\nthree\nfour\n"), 0o644))
	require.NoError(t, os.Symlink("/etc/passwd", filepath.Join(dir, "server", "leak")))
	withAllocDir(t, f, dir)
	tests := []struct {
		name string
		args []string
		code int
		want string // in stdout
		err  string
	}{
		{name: "cat", args: []string{allocID[:6], "server/out.txt"}, want: "one\ntwo\nthree\nfour\n"},
		{name: "tail lines", args: []string{"-tail", "-n", "2", allocID, "/server/out.txt"}, want: "three\nfour\n"},
		{name: "tail bytes", args: []string{"-c", "5", allocID, "/server/out.txt"}, want: "four\n"},
		{name: "list", args: []string{allocID, "server"}, want: "local/"},
		{name: "list root", args: []string{allocID}, want: "server/"},
		{name: "stat", args: []string{"-stat", allocID, "server/out.txt"}, want: "text/plain; charset=utf-8"},
		{name: "leaving the dir", args: []string{allocID, "../../etc/passwd"}, code: 1, err: "leaves the allocation directory"},
		{name: "link out", args: []string{allocID, "server/leak"}, code: 1, err: "leaves the allocation directory"},
		{name: "missing", args: []string{allocID, "server/nope"}, code: 1, err: "404"},
		{name: "tail of a dir", args: []string{"-tail", allocID, "server"}, code: 1, err: "is a directory"},
		{name: "usage", args: []string{}, code: 1, err: "ID [PATH]"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			code, out, errOut := f.runCLI(append([]string{"alloc", "fs"}, tt.args...)...)
			require.Equal(t, tt.code, code, errOut)
			require.Contains(t, out, tt.want)
			require.Contains(t, errOut, tt.err)
			if tt.code == 0 && strings.HasSuffix(tt.want, "\n") {
				require.Equal(t, tt.want, out)
			}
		})
	}
}
