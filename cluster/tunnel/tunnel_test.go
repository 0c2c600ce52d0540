package tunnel

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/asynkron/protoactor-go/actor"
	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"

	"github.com/troupe-dev/troupe/cluster/remote"
)

func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m, goleak.IgnoreTopFunction("github.com/asynkron/protoactor-go/actor.NewDeadLetter.NewThrottle.func4.1"))
}

// fixture starts one actor system with remoting (the tunnel's two ends
// meet over its own transport), an HTTP server to tunnel to, and the
// listener for region "eu" named "federation".
type fixture struct {
	c        *remote.Client
	srv      *httptest.Server
	listener *actor.PID
}

func newFixture(t *testing.T, h http.Handler) *fixture {
	t.Helper()
	c, err := remote.NewClient("127.0.0.1:0", nil)
	require.NoError(t, err)
	srv := httptest.NewServer(h)
	dial := func(ctx context.Context) (net.Conn, error) {
		var d net.Dialer
		return d.DialContext(ctx, "tcp", srv.Listener.Addr().String())
	}
	pid, err := c.Root().SpawnNamed(Listener("eu", dial, nil), "federation")
	require.NoError(t, err)
	f := &fixture{c: c, srv: srv, listener: pid}
	t.Cleanup(func() {
		_ = c.Root().StopFuture(pid).Wait()
		srv.CloseClientConnections()
		srv.Close()
		c.Close()
	})
	return f
}

// client is an HTTP client whose every connection is a tunnel.
func (f *fixture) client(region string) *http.Client {
	return &http.Client{Transport: &http.Transport{DisableKeepAlives: true,
		DialContext: func(ctx context.Context, _, _ string) (net.Conn, error) {
			return Dial(ctx, f.c.Root(), f.c.Address(), "federation", region)
		}}}
}

func TestTunnelCarriesRequestAndAnswer(t *testing.T) {
	body := strings.Repeat("x", 3*chunkSize+17) // several chunks each way
	f := newFixture(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		in, _ := io.ReadAll(r.Body)
		fmt.Fprintf(w, "%s %s %s %d", r.Method, r.URL.RequestURI(), r.Header.Get("X-Nomad-Token"), len(in))
		_, _ = w.Write([]byte(body))
	}))
	req, err := http.NewRequest(http.MethodPut, "http://eu/v1/jobs?region=eu", strings.NewReader(body))
	require.NoError(t, err)
	req.Header.Set("X-Nomad-Token", "secret")
	resp, err := f.client("eu").Do(req)
	require.NoError(t, err)
	defer resp.Body.Close()
	got, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	require.Equal(t, fmt.Sprintf("PUT /v1/jobs?region=eu secret %d", len(body))+body, string(got))
}

func TestTunnelStreamsAnswer(t *testing.T) {
	next := make(chan string)
	f := newFixture(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.WriteHeader(http.StatusOK)
		w.(http.Flusher).Flush()
		for {
			select {
			case line := <-next:
				fmt.Fprintln(w, line)
				w.(http.Flusher).Flush()
			case <-r.Context().Done():
				return
			}
		}
	}))
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, "http://eu/v1/event/stream", nil)
	require.NoError(t, err)
	resp, err := f.client("eu").Do(req)
	require.NoError(t, err)
	defer resp.Body.Close()
	lines := bufio.NewScanner(resp.Body)
	for _, want := range []string{"one", "two", "three"} {
		next <- want // each line arrives before the next is written
		require.True(t, lines.Scan())
		require.Equal(t, want, lines.Text())
	}
}

func TestTunnelRefusesOtherRegion(t *testing.T) {
	f := newFixture(t, http.NotFoundHandler())
	_, err := Dial(context.Background(), f.c.Root(), f.c.Address(), "federation", "us")
	require.ErrorIs(t, err, ErrRefused)
	require.ErrorContains(t, err, "region eu, not us")
}

func TestTunnelDialFailsAtDeadline(t *testing.T) {
	f := newFixture(t, http.NotFoundHandler())
	ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
	defer cancel()
	start := time.Now()
	_, err := Dial(ctx, f.c.Root(), f.c.Address(), "nobody", "eu") // no such actor
	require.Error(t, err)
	require.Less(t, time.Since(start), 5*time.Second)
}

// A listener that stops breaks its tunnels: a blocked read returns.
func TestTunnelBreaksWhenListenerStops(t *testing.T) {
	hold := make(chan struct{})
	defer close(hold)
	f := newFixture(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.WriteHeader(http.StatusOK)
		w.(http.Flusher).Flush()
		select {
		case <-hold:
		case <-r.Context().Done():
		}
	}))
	resp, err := f.client("eu").Get("http://eu/v1/jobs?index=9")
	require.NoError(t, err)
	defer resp.Body.Close()
	read := make(chan error, 1)
	go func() { _, err := io.ReadAll(resp.Body); read <- err }()
	require.NoError(t, f.c.Root().StopFuture(f.listener).Wait())
	select {
	case err := <-read:
		require.Error(t, err) // the answer was cut short
	case <-time.After(10 * time.Second):
		t.Fatal("the read did not end when the listener stopped")
	}
}
