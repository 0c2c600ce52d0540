package artifact

import (
	"archive/tar"
	"archive/zip"
	"bytes"
	"compress/gzip"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// serve starts an HTTP server with the given files (path -> body) and
// records the last request's headers.
func serve(t *testing.T, files map[string][]byte) (*httptest.Server, *http.Header) {
	t.Helper()
	var last http.Header
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, ok := files[r.URL.Path]
		if !ok {
			http.NotFound(w, r)
			return
		}
		if r.Method == http.MethodGet {
			last = r.Header.Clone()
		}
		_, _ = w.Write(body)
	}))
	t.Cleanup(srv.Close)
	return srv, &last
}

func target(t *testing.T) Target {
	t.Helper()
	alloc := t.TempDir()
	task := filepath.Join(alloc, "web")
	require.NoError(t, os.MkdirAll(filepath.Join(task, "local"), 0o755))
	return Target{TaskDir: task, AllocDir: alloc}
}

func tarGz(t *testing.T, files map[string]string) []byte {
	t.Helper()
	var buf bytes.Buffer
	zw := gzip.NewWriter(&buf)
	tw := tar.NewWriter(zw)
	for name, body := range files {
		require.NoError(t, tw.WriteHeader(&tar.Header{Name: name, Mode: 0o644, Size: int64(len(body)), Typeflag: tar.TypeReg}))
		_, err := tw.Write([]byte(body))
		require.NoError(t, err)
	}
	require.NoError(t, tw.Close())
	require.NoError(t, zw.Close())
	return buf.Bytes()
}

func zipOf(t *testing.T, files map[string]string) []byte {
	t.Helper()
	var buf bytes.Buffer
	zw := zip.NewWriter(&buf)
	for name, body := range files {
		w, err := zw.Create(name)
		require.NoError(t, err)
		_, err = w.Write([]byte(body))
		require.NoError(t, err)
	}
	require.NoError(t, zw.Close())
	return buf.Bytes()
}

func sha(b []byte) string {
	s := sha256.Sum256(b)
	return "sha256:" + hex.EncodeToString(s[:])
}

func readFile(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	require.NoError(t, err)
	return string(b)
}

func TestFetchFileDefaultsToLocal(t *testing.T) {
	body := []byte("hello artifact\n")
	srv, hdr := serve(t, map[string][]byte{"/files/hello.txt": body})
	tg := target(t)
	var f Fetcher
	err := f.Fetch(context.Background(), tg, Artifact{
		Source: srv.URL + "/files/hello.txt", Headers: map[string]string{"X-Token": "abc"},
	})
	require.NoError(t, err)
	require.Equal(t, string(body), readFile(t, filepath.Join(tg.TaskDir, "local", "hello.txt")))
	require.Equal(t, "abc", hdr.Get("X-Token"))
	left, err := filepath.Glob(filepath.Join(tg.TaskDir, ".artifact-*"))
	require.NoError(t, err)
	require.Empty(t, left, "the fetch directory is removed")
}

func TestFetchModeFile(t *testing.T) {
	srv, _ := serve(t, map[string][]byte{"/a": []byte("x")})
	tg := target(t)
	var f Fetcher
	require.NoError(t, f.Fetch(context.Background(), tg, Artifact{Source: srv.URL + "/a", Mode: ModeFile, Destination: "/local/conf/app.conf"}))
	require.Equal(t, "x", readFile(t, filepath.Join(tg.TaskDir, "local", "conf", "app.conf")))
}

func TestFetchUnpacksArchives(t *testing.T) {
	tgz := tarGz(t, map[string]string{"bin/run.sh": "echo hi\n", "README": "read me"})
	zp := zipOf(t, map[string]string{"data/one.txt": "1"})
	srv, _ := serve(t, map[string][]byte{"/app.tar.gz": tgz, "/data.zip": zp})
	tg := target(t)
	var f Fetcher
	ctx := context.Background()
	require.NoError(t, f.Fetch(ctx, tg, Artifact{Source: srv.URL + "/app.tar.gz", Options: map[string]string{"checksum": sha(tgz)}}))
	require.NoError(t, f.Fetch(ctx, tg, Artifact{Source: srv.URL + "/data.zip", Destination: "local"}))
	require.Equal(t, "echo hi\n", readFile(t, filepath.Join(tg.TaskDir, "local", "bin", "run.sh")))
	require.Equal(t, "read me", readFile(t, filepath.Join(tg.TaskDir, "local", "README")))
	require.Equal(t, "1", readFile(t, filepath.Join(tg.TaskDir, "local", "data", "one.txt")))

	// archive = false keeps it packed
	require.NoError(t, f.Fetch(ctx, tg, Artifact{Source: srv.URL + "/app.tar.gz", Destination: "packed", Options: map[string]string{"archive": "false"}}))
	require.Equal(t, string(tgz), readFile(t, filepath.Join(tg.TaskDir, "packed", "app.tar.gz")))
}

func TestFetchChecksum(t *testing.T) {
	body := []byte("payload")
	srv, _ := serve(t, map[string][]byte{"/p.bin": body})
	tg := target(t)
	var f Fetcher
	ctx := context.Background()
	require.NoError(t, f.Fetch(ctx, tg, Artifact{Source: srv.URL + "/p.bin", Options: map[string]string{"checksum": sha(body)}}))

	wrong := sha([]byte("something else"))
	err := f.Fetch(ctx, tg, Artifact{Source: srv.URL + "/p.bin", Destination: "other", Options: map[string]string{"checksum": wrong}})
	require.ErrorIs(t, err, ErrChecksumMismatch)
	require.Contains(t, err.Error(), wrong[len("sha256:"):])
	require.NoFileExists(t, filepath.Join(tg.TaskDir, "other", "p.bin"), "a file that fails its checksum is not placed")
}

func TestFetchDestinationNeverEscapes(t *testing.T) {
	srv, _ := serve(t, map[string][]byte{"/a.txt": []byte("x")})
	var f Fetcher
	ctx := context.Background()
	for _, dest := range []string{"../outside", "local/../../outside", "/../outside"} {
		t.Run(dest, func(t *testing.T) {
			tg := target(t)
			err := f.Fetch(ctx, tg, Artifact{Source: srv.URL + "/a.txt", Destination: dest})
			require.ErrorIs(t, err, ErrDestinationEscapes)
			require.NoDirExists(t, filepath.Join(tg.AllocDir, "outside"))
		})
	}
	t.Run("symlink in the task dir", func(t *testing.T) {
		tg := target(t)
		outside := t.TempDir()
		require.NoError(t, os.Symlink(outside, filepath.Join(tg.TaskDir, "evil")))
		err := f.Fetch(ctx, tg, Artifact{Source: srv.URL + "/a.txt", Destination: "evil/"})
		require.ErrorIs(t, err, ErrDestinationEscapes)
		require.NoFileExists(t, filepath.Join(outside, "a.txt"))
	})
	t.Run("archive entry climbing out", func(t *testing.T) {
		tg := target(t)
		evil := tarGz(t, map[string]string{"../../escaped": "x"})
		srv, _ := serve(t, map[string][]byte{"/evil.tgz": evil})
		require.Error(t, f.Fetch(ctx, tg, Artifact{Source: srv.URL + "/evil.tgz"}))
		require.NoFileExists(t, filepath.Join(tg.AllocDir, "escaped"))
		require.NoFileExists(t, filepath.Join(filepath.Dir(tg.AllocDir), "escaped"))
	})
}

func TestFetchLimits(t *testing.T) {
	big := bytes.Repeat([]byte("a"), 64<<10)
	bomb := tarGz(t, map[string]string{"big": string(bytes.Repeat([]byte("0"), 1<<20))})
	many := tarGz(t, map[string]string{"1": "a", "2": "b", "3": "c"})
	srv, _ := serve(t, map[string][]byte{"/big": big, "/bomb.tar.gz": bomb, "/many.tar.gz": many})
	ctx := context.Background()
	f := Fetcher{Limits: Limits{HTTPMaxBytes: 1 << 20, DecompressionSize: 512 << 10, DecompressionFileCount: 2}}
	for name, src := range map[string]string{"body": "/big", "unpacked size": "/bomb.tar.gz", "file count": "/many.tar.gz"} {
		t.Run(name, func(t *testing.T) {
			tg := target(t)
			lim := f
			if name == "body" {
				lim.Limits.HTTPMaxBytes = 1 << 10
			}
			err := lim.Fetch(ctx, tg, Artifact{Source: srv.URL + src})
			require.ErrorIs(t, err, ErrFetch)
			require.Regexp(t, "size limit|larger than limit|too many files", err.Error())
			entries, err := os.ReadDir(filepath.Join(tg.TaskDir, "local"))
			require.NoError(t, err)
			require.Empty(t, entries, "nothing is placed")
		})
	}
}

func TestFetchTimeout(t *testing.T) {
	release := make(chan struct{})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		select {
		case <-r.Context().Done():
		case <-release:
		}
	}))
	t.Cleanup(srv.Close)
	t.Cleanup(func() { close(release) })
	f := Fetcher{Limits: Limits{Timeout: 200 * time.Millisecond}}
	start := time.Now()
	err := f.Fetch(context.Background(), target(t), Artifact{Source: srv.URL + "/slow"})
	require.ErrorIs(t, err, ErrFetch)
	require.Less(t, time.Since(start), 10*time.Second)
}

func TestFetchLocalSources(t *testing.T) {
	tg := target(t)
	shared := filepath.Join(tg.AllocDir, "alloc", "data")
	require.NoError(t, os.MkdirAll(shared, 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(shared, "in.txt"), []byte("inside"), 0o644))
	var f Fetcher
	ctx := context.Background()
	require.NoError(t, f.Fetch(ctx, tg, Artifact{Source: "../alloc/data/in.txt", Mode: ModeFile, Destination: "local/copy.txt"}))
	require.Equal(t, "inside", readFile(t, filepath.Join(tg.TaskDir, "local", "copy.txt")))
	fi, err := os.Lstat(filepath.Join(tg.TaskDir, "local", "copy.txt"))
	require.NoError(t, err)
	require.True(t, fi.Mode().IsRegular(), "copied, not linked")

	outside := filepath.Join(t.TempDir(), "secret")
	require.NoError(t, os.WriteFile(outside, []byte("host"), 0o600))
	err = f.Fetch(ctx, tg, Artifact{Source: outside, Mode: ModeFile, Destination: "local/stolen"})
	require.ErrorIs(t, err, ErrSourceOutside)
	require.NoFileExists(t, filepath.Join(tg.TaskDir, "local", "stolen"))

	// a link beneath the alloc dir to the host's file is outside too
	require.NoError(t, os.Symlink(outside, filepath.Join(shared, "link")))
	err = f.Fetch(ctx, tg, Artifact{Source: filepath.Join(shared, "link"), Mode: ModeFile, Destination: "local/stolen"})
	require.ErrorIs(t, err, ErrSourceOutside)
}

func TestFetchRefusesBadInput(t *testing.T) {
	var f Fetcher
	ctx := context.Background()
	require.ErrorIs(t, f.Fetch(ctx, target(t), Artifact{}), ErrNoSource)
	require.ErrorIs(t, f.Fetch(ctx, target(t), Artifact{Source: "http://x", Mode: "files"}), ErrBadMode)
}

func TestSourceURL(t *testing.T) {
	require.Equal(t, "http://h/a?archive=false&checksum=sha256%3Aab",
		sourceURL("http://h/a", map[string]string{"checksum": "sha256:ab", "archive": "false"}))
	require.Equal(t, "http://h/a?x=1&archive=false", sourceURL("http://h/a?x=1", map[string]string{"archive": "false"}))
	require.Equal(t, "http://h/a", sourceURL("http://h/a", nil))
}

func TestFetchLocalDirectoryIsCopied(t *testing.T) {
	tg := target(t)
	shared := filepath.Join(tg.AllocDir, "alloc", "data", "conf")
	require.NoError(t, os.MkdirAll(filepath.Join(shared, "sub"), 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(shared, "sub", "a.txt"), []byte("a"), 0o644))
	var f Fetcher
	require.NoError(t, f.Fetch(context.Background(), tg, Artifact{Source: "../alloc/data/conf", Destination: "local/conf"}))
	p := filepath.Join(tg.TaskDir, "local", "conf", "sub", "a.txt")
	require.Equal(t, "a", readFile(t, p))
	fi, err := os.Lstat(filepath.Join(tg.TaskDir, "local", "conf"))
	require.NoError(t, err)
	require.True(t, fi.IsDir(), "copied, not linked")
}

func TestFetchInsecureSkipsTLSVerification(t *testing.T) {
	srv := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = w.Write([]byte("tls"))
	}))
	t.Cleanup(srv.Close)
	var f Fetcher
	ctx := context.Background()
	tg := target(t)
	require.ErrorIs(t, f.Fetch(ctx, tg, Artifact{Source: srv.URL + "/x.txt"}), ErrFetch)
	require.NoError(t, f.Fetch(ctx, tg, Artifact{Source: srv.URL + "/x.txt", Insecure: true}))
	require.Equal(t, "tls", readFile(t, filepath.Join(tg.TaskDir, "local", "x.txt")))
}
