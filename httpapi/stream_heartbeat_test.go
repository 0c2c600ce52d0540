package httpapi

import (
	"bufio"
	"context"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/troupe-dev/troupe/messages"
)

// logsBackend is allocDirFixture's allocation with one task, web, whose
// stdout is web/out.txt.
type logsBackend struct{ *fsBackend }

func (b logsBackend) AllocForLogs(id string) (*messages.Allocation, *messages.Job, string, error) {
	if id != "a1" {
		return nil, nil, "", os.ErrNotExist
	}
	job := &messages.Job{ID: "j", TaskGroups: []*messages.TaskGroup{{Name: "g", Tasks: []*messages.Task{{Name: "web"}}}}}
	return &messages.Allocation{ID: "a1", TaskGroup: "g"}, job, "", nil
}

func (b logsBackend) TaskLogPath(_, task, _ string) (string, error) {
	return filepath.Join(b.dir, task, "out.txt"), nil
}

// streamLines opens target on a server with a 5 ms stream heartbeat and
// sends each line of the body on the returned channel until the test
// ends.
func streamLines(t *testing.T, b Backend, target string) <-chan string {
	t.Helper()
	srv := httptest.NewServer(New(b, nil, Options{StreamHeartbeat: 5 * time.Millisecond}))
	ctx, cancel := context.WithCancel(context.Background())
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, srv.URL+target, nil)
	require.NoError(t, err)
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	require.Equal(t, http.StatusOK, resp.StatusCode)
	lines := make(chan string, 64)
	go func() {
		defer close(lines)
		sc := bufio.NewScanner(resp.Body)
		for sc.Scan() {
			select {
			case lines <- sc.Text():
			case <-ctx.Done():
				return
			}
		}
	}()
	t.Cleanup(func() { cancel(); resp.Body.Close(); srv.Close() })
	return lines
}

// nextLine waits, with a deadline, for the stream's next line.
func nextLine(t *testing.T, lines <-chan string) string {
	t.Helper()
	select {
	case l, ok := <-lines:
		require.True(t, ok, "the stream ended")
		return l
	case <-time.After(5 * time.Second):
		t.Fatal("no frame within 5s")
		return ""
	}
}

// TestFollowedStreamsSendHeartbeats: a followed fs stream or log with
// nothing new sends Nomad's empty frame, {}, at the heartbeat interval;
// data frames still come between them.
func TestFollowedStreamsSendHeartbeats(t *testing.T) {
	for name, target := range map[string]string{
		"fs stream": "/v1/client/fs/stream/a1?path=web/out.txt",
		"logs":      "/v1/client/fs/logs/a1?task=web&type=stdout&follow=true",
	} {
		t.Run(name, func(t *testing.T) {
			b := logsBackend{allocDirFixture(t)}
			lines := streamLines(t, b, target)
			require.Contains(t, nextLine(t, lines), `"Data":"MDEyMzQ1Njc4OQ=="`)
			require.Equal(t, "{}", nextLine(t, lines), "a quiet stream gets a heartbeat")
			require.Equal(t, "{}", nextLine(t, lines), "and another")

			f, err := os.OpenFile(filepath.Join(b.dir, "web", "out.txt"), os.O_APPEND|os.O_WRONLY, 0)
			require.NoError(t, err)
			_, err = f.WriteString("more")
			require.NoError(t, err)
			require.NoError(t, f.Close())
			for {
				l := nextLine(t, lines)
				if l != "{}" {
					require.Contains(t, l, `"Data":"bW9yZQ=="`, "the new bytes come as a data frame")
					break
				}
			}
		})
	}
}

// TestPlainStreamSendsNoHeartbeat: with plain=true the body is the file's
// bytes only (Nomad sends heartbeats in JSON streams only), however many
// heartbeat intervals pass while it waits.
func TestPlainStreamSendsNoHeartbeat(t *testing.T) {
	b := logsBackend{allocDirFixture(t)}
	srv := httptest.NewServer(New(b, nil, Options{StreamHeartbeat: time.Millisecond}))
	defer srv.Close()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, srv.URL+"/v1/client/fs/logs/a1?task=web&follow=true&plain=true", nil)
	require.NoError(t, err)
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	defer resp.Body.Close()
	buf := make([]byte, 10)
	_, err = resp.Body.Read(buf[:1])
	require.NoError(t, err) // the stream has begun; the rest waits for more bytes
	f, err := os.OpenFile(filepath.Join(b.dir, "web", "out.txt"), os.O_APPEND|os.O_WRONLY, 0)
	require.NoError(t, err)
	_, err = f.WriteString("!")
	require.NoError(t, err)
	require.NoError(t, f.Close())
	var got strings.Builder
	got.Write(buf[:1])
	for !strings.HasSuffix(got.String(), "!") {
		n, err := resp.Body.Read(buf)
		require.NoError(t, err)
		got.Write(buf[:n])
	}
	require.Equal(t, "0123456789!", got.String(), "no heartbeat between the bytes")
}
