package httpapi

import (
	"context"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/troupe-dev/troupe/api"
)

// noLeaderErr says NoLeader, as the agent's error after its hold timeout.
type noLeaderErr struct{}

func (noLeaderErr) Error() string  { return "agent: no cluster leader: context deadline exceeded" }
func (noLeaderErr) NoLeader() bool { return true }

// waitingBackend is a server with no leader: AwaitLeader fails, and the
// leader was last heard from lastContact ago.
type waitingBackend struct {
	*fsmBackend
	waited      int
	lastContact time.Duration
}

func (b *waitingBackend) AwaitLeader(context.Context, string) (string, error) {
	b.waited++
	return "", noLeaderErr{}
}

func (b *waitingBackend) LastContact() (time.Duration, bool) { return b.lastContact, false }

func TestConsistentReadWaitsForLeader(t *testing.T) {
	for _, tc := range []struct {
		target     string
		code       int
		waited     int
		bodyPrefix string
	}{
		{"/v1/jobs", http.StatusInternalServerError, 1, api.NoLeaderBody},
		{"/v1/jobs?stale", http.StatusOK, 0, "[]"},
		{"/v1/jobs?stale=false", http.StatusInternalServerError, 1, api.NoLeaderBody},
	} {
		t.Run(tc.target, func(t *testing.T) {
			b := &waitingBackend{fsmBackend: newFSMBackend(), lastContact: 1500 * time.Millisecond}
			rec := httptest.NewRecorder()
			New(b, nil, Options{}).ServeHTTP(rec, httptest.NewRequest("GET", tc.target, nil))
			require.Equal(t, tc.code, rec.Code, rec.Body.String())
			require.True(t, strings.HasPrefix(rec.Body.String(), tc.bodyPrefix), rec.Body.String())
			require.Equal(t, tc.waited, b.waited)
			require.Equal(t, "false", rec.Header().Get("X-Nomad-KnownLeader"))
			require.Equal(t, "1500", rec.Header().Get("X-Nomad-LastContact"))
		})
	}
}

func TestIsNoLeader(t *testing.T) {
	require.True(t, isNoLeader(noLeaderErr{}))
	require.True(t, isNoLeader(errors.Join(errors.New("x"), noLeaderErr{})))
	require.False(t, isNoLeader(errors.New("cluster: not the raft leader")))
}

// movingBackend is a follower whose raft first names a leader that is
// gone (dead: its address refuses connections), then the live leader.
type movingBackend struct {
	*fsmBackend
	dead, live string
	asked      []string // the unreachable argument of each AwaitLeader
}

func (b *movingBackend) AwaitLeader(_ context.Context, unreachable string) (string, error) {
	b.asked = append(b.asked, unreachable)
	if unreachable == b.dead {
		return b.live, nil
	}
	return b.dead, nil
}

func (b *movingBackend) LastContact() (time.Duration, bool) { return 0, true }

// TestConsistentReadSkipsUnreachableLeader: a follower's raft names a
// killed leader until its heartbeat times out; a consistent read that
// cannot reach it waits for the next leader and is answered there (not a
// 502), which sees the request passed on once.
func TestConsistentReadSkipsUnreachableLeader(t *testing.T) {
	dead := httptest.NewServer(http.NotFoundHandler())
	deadAddr := dead.Listener.Addr().String()
	dead.Close()
	var hops string
	live := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		hops = r.Header.Get(ProxiedHeader)
		w.Header().Set("X-Nomad-KnownLeader", "true")
		_, _ = w.Write([]byte(`[{"ID":"kept"}]`))
	}))
	defer live.Close()
	b := &movingBackend{fsmBackend: newFSMBackend(), dead: deadAddr, live: live.Listener.Addr().String()}
	rec := httptest.NewRecorder()
	New(b, nil, Options{}).ServeHTTP(rec, httptest.NewRequest("GET", "/v1/jobs", nil))
	require.Equal(t, http.StatusOK, rec.Code, rec.Body.String())
	require.Equal(t, `[{"ID":"kept"}]`, rec.Body.String())
	require.Equal(t, []string{"", deadAddr}, b.asked)
	require.Equal(t, "1", hops, "the retry counts one hop, not two")
	require.Equal(t, "true", rec.Header().Get("X-Nomad-KnownLeader"))
}

// TestWriteSkipsUndialledLeader: a write passed on to a leader that
// cannot be dialled never reached it, so it goes, body and all, to the
// next leader, which answers it.
func TestWriteSkipsUndialledLeader(t *testing.T) {
	dead := httptest.NewServer(http.NotFoundHandler())
	deadAddr := dead.Listener.Addr().String()
	dead.Close()
	var got []string
	live := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		got = append(got, r.Method+" "+r.URL.Path+" "+string(b))
		_, _ = w.Write([]byte(`{"EvalID":"e1"}`))
	}))
	defer live.Close()
	b := &movingBackend{fsmBackend: newFSMBackend(), dead: deadAddr, live: live.Listener.Addr().String()}
	body := `{"Count":2,"Target":{"Group":"g"}}`
	rec := httptest.NewRecorder()
	New(b, nil, Options{}).ServeHTTP(rec, httptest.NewRequest("POST", "/v1/job/web/scale", strings.NewReader(body)))
	require.Equal(t, http.StatusOK, rec.Code, rec.Body.String())
	require.Equal(t, `{"EvalID":"e1"}`, rec.Body.String())
	require.Equal(t, []string{"POST /v1/job/web/scale " + body}, got, "the live leader got the write once")
	require.Equal(t, []string{"", deadAddr}, b.asked)
}
