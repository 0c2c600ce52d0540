package httpapi

import (
	"context"
	"errors"
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

func (b *waitingBackend) AwaitLeader(context.Context) (string, error) {
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
