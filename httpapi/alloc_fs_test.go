package httpapi

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"

	nomad "github.com/hashicorp/nomad/api"
	"github.com/stretchr/testify/require"
)

// fsBackend serves the allocation "a1" from dir, and says any other runs
// on the agent at elsewhere.
type fsBackend struct {
	fakeBackend
	dir, elsewhere string
	id             string // "": a1
}

func (b *fsBackend) AllocDirFor(id string) (string, string, error) {
	if id == b.id || b.id == "" && id == "a1" {
		return b.dir, "", nil
	}
	if b.elsewhere != "" {
		return "", b.elsewhere, nil
	}
	return "", "", os.ErrNotExist
}

// allocDirFixture is an allocation dir with a task's file, a link inside
// and links pointing out of it, beside a secret the links name.
func allocDirFixture(t *testing.T) *fsBackend {
	dir := t.TempDir()
	secret := filepath.Join(t.TempDir(), "secret")
	require.NoError(t, os.WriteFile(secret, []byte("SECRET"), 0o600))
	require.NoError(t, os.MkdirAll(filepath.Join(dir, "alloc", "logs"), 0o755))
	require.NoError(t, os.MkdirAll(filepath.Join(dir, "web"), 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(dir, "web", "out.txt"), []byte("0123456789"), 0o644))
	require.NoError(t, os.Symlink("out.txt", filepath.Join(dir, "web", "inside")))
	require.NoError(t, os.Symlink(secret, filepath.Join(dir, "web", "leak")))
	require.NoError(t, os.Symlink(filepath.Dir(secret), filepath.Join(dir, "web", "leakdir")))
	return &fsBackend{dir: dir}
}

func fsGet(t *testing.T, b Backend, op string, params url.Values) (int, string) {
	t.Helper()
	code, body, _ := do(t, b, http.MethodGet, "/v1/client/fs/"+op+"/a1?"+params.Encode(), "", nil)
	return code, body
}

func TestAllocFSReads(t *testing.T) {
	b := allocDirFixture(t)
	code, body := fsGet(t, b, "ls", url.Values{"path": {"/web"}})
	require.Equal(t, http.StatusOK, code, body)
	var ls []*nomad.AllocFileInfo
	require.NoError(t, json.Unmarshal([]byte(body), &ls))
	byName := map[string]*nomad.AllocFileInfo{}
	for _, fi := range ls {
		byName[fi.Name] = fi
	}
	require.Len(t, byName, 4)
	require.Equal(t, int64(10), byName["out.txt"].Size)
	require.Equal(t, "-rw-r--r--", byName["out.txt"].FileMode)
	require.Equal(t, "Lrwxrwxrwx", byName["leak"].FileMode, "a link is described, not followed")

	code, body = fsGet(t, b, "ls", nil)
	require.Equal(t, http.StatusOK, code, body)
	require.Contains(t, body, `"Name":"alloc"`)
	require.Contains(t, body, `"IsDir":true`)

	code, body = fsGet(t, b, "stat", url.Values{"path": {"web/out.txt"}})
	require.Equal(t, http.StatusOK, code, body)
	var st nomad.AllocFileInfo
	require.NoError(t, json.Unmarshal([]byte(body), &st))
	require.Equal(t, nomad.AllocFileInfo{Name: "out.txt", Size: 10, FileMode: "-rw-r--r--",
		ModTime: st.ModTime, ContentType: "text/plain; charset=utf-8"}, st)

	tests := []struct {
		name   string
		op     string
		params url.Values
		code   int
		want   string
	}{
		{"cat", "cat", url.Values{"path": {"/web/out.txt"}}, 200, "0123456789"},
		{"cat a link inside", "cat", url.Values{"path": {"web/inside"}}, 200, "0123456789"},
		{"readat middle", "readat", url.Values{"path": {"web/out.txt"}, "offset": {"2"}, "limit": {"3"}}, 200, "234"},
		{"readat no limit", "readat", url.Values{"path": {"web/out.txt"}, "offset": {"7"}, "limit": {"0"}}, 200, "789"},
		{"readat past the end", "readat", url.Values{"path": {"web/out.txt"}, "offset": {"20"}}, 200, ""},
		{"readat negative", "readat", url.Values{"path": {"web/out.txt"}, "offset": {"-1"}}, 400, "invalid offset"},
		{"readat bad limit", "readat", url.Values{"path": {"web/out.txt"}, "limit": {"x"}}, 400, "invalid limit"},
		{"cat a dir", "cat", url.Values{"path": {"web"}}, 400, "not a regular file"},
		{"ls a file", "ls", url.Values{"path": {"web/out.txt"}}, 400, "not a directory"},
		{"missing", "cat", url.Values{"path": {"web/nope"}}, 404, "no file or directory"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			code, body := fsGet(t, b, tt.op, tt.params)
			require.Equal(t, tt.code, code, body)
			if code == 200 {
				require.Equal(t, tt.want, body)
			} else {
				require.Contains(t, body, tt.want)
			}
		})
	}
}

// TestAllocFSRefusesPathsLeavingTheDir: no route reads or describes
// anything outside the allocation dir, whichever way the path tries.
func TestAllocFSRefusesPathsLeavingTheDir(t *testing.T) {
	b := allocDirFixture(t)
	for _, path := range []string{"../../etc/passwd", "..", "/../x", "web/../../x", "web/leak", "web/leakdir/secret", "web/leakdir"} {
		for _, op := range []string{"ls", "stat", "cat", "readat", "stream"} {
			t.Run(op+" "+path, func(t *testing.T) {
				code, body := fsGet(t, b, op, url.Values{"path": {path}, "follow": {"false"}})
				require.Equal(t, http.StatusBadRequest, code, body)
				require.Contains(t, body, "leaves the allocation directory")
				require.NotContains(t, body, "SECRET")
			})
		}
	}
	// An absolute path is taken beneath the allocation dir, never the host's.
	code, body := fsGet(t, b, "cat", url.Values{"path": {"/etc/passwd"}})
	require.Equal(t, http.StatusNotFound, code, body)
	require.NotContains(t, body, "root:")
}

func TestAllocFSStreamFrames(t *testing.T) {
	b := allocDirFixture(t)
	code, body := fsGet(t, b, "stream", url.Values{"path": {"web/out.txt"}, "offset": {"4"}, "origin": {"end"}, "follow": {"false"}})
	require.Equal(t, http.StatusOK, code, body)
	var fr nomad.StreamFrame
	require.NoError(t, json.NewDecoder(strings.NewReader(body)).Decode(&fr))
	require.Equal(t, nomad.StreamFrame{Offset: 10, Data: []byte("6789"), File: "web/out.txt"}, fr)
	require.Contains(t, body, `"Data":"Njc4OQ=="`, "Data is base64")
	code, body = fsGet(t, b, "stream", url.Values{"path": {"web/out.txt"}, "origin": {"middle"}})
	require.Equal(t, http.StatusBadRequest, code, body)
}

// TestAllocFSThroughNomadClient: Nomad's Go client lists, stats, cats,
// reads and streams (following, until cancelled) unchanged.
func TestAllocFSThroughNomadClient(t *testing.T) {
	b := allocDirFixture(t)
	srv := httptest.NewServer(New(b, nil, Options{}))
	defer srv.Close()
	c, err := nomad.NewClient(&nomad.Config{Address: srv.URL})
	require.NoError(t, err)
	al := &nomad.Allocation{ID: "a1"}
	fs := c.AllocFS()
	ls, _, err := fs.List(al, "/web", nil)
	require.NoError(t, err)
	require.Len(t, ls, 4)
	st, _, err := fs.Stat(al, "/web/out.txt", nil)
	require.NoError(t, err)
	require.Equal(t, int64(10), st.Size)
	rc, err := fs.Cat(al, "/web/out.txt", nil)
	require.NoError(t, err)
	got, _ := io.ReadAll(rc)
	rc.Close()
	require.Equal(t, "0123456789", string(got))
	rc, err = fs.ReadAt(al, "/web/out.txt", 5, 2, nil)
	require.NoError(t, err)
	got, _ = io.ReadAll(rc)
	rc.Close()
	require.Equal(t, "56", string(got))
	_, err = fs.Cat(al, "/web/leak", nil)
	require.ErrorContains(t, err, "400")

	// Stream follows: it lasts until the request's context ends.
	ctx, stop := context.WithCancel(context.Background())
	cancel := make(chan struct{})
	frames, errs := fs.Stream(al, "/web/out.txt", nomad.OriginStart, 3, cancel, (&nomad.QueryOptions{}).WithContext(ctx))
	select {
	case fr := <-frames:
		require.Equal(t, "3456789", string(fr.Data))
		require.Equal(t, int64(10), fr.Offset)
	case err := <-errs:
		t.Fatal(err)
	}
	close(cancel)
	stop()
}

func TestAllocFSProxiesToTheAgentThatRunsIt(t *testing.T) {
	runs := allocDirFixture(t)
	runs.id = "a2"
	other := httptest.NewServer(New(runs, nil, Options{}))
	defer other.Close()
	b := &fsBackend{id: "none", elsewhere: strings.TrimPrefix(other.URL, "http://")}
	code, body, _ := do(t, b, http.MethodGet, "/v1/client/fs/cat/a2?path=web/out.txt", "", nil)
	require.Equal(t, http.StatusOK, code, body)
	require.Equal(t, "0123456789", body)
	code, body, _ = do(t, b, http.MethodGet, "/v1/client/fs/cat/a2?path=web/leak", "", nil)
	require.Equal(t, http.StatusBadRequest, code, "the agent that runs it refuses too: %s", body)
}

func TestAllocFSWithoutBackend(t *testing.T) {
	code, body := fsGet(t, &fakeBackend{}, "ls", nil)
	require.Equal(t, http.StatusNotImplemented, code, body)
}
