package alloc

import (
	"context"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strconv"
	"sync/atomic"
	"testing"
	"time"

	"github.com/asynkron/protoactor-go/actor"
	"github.com/stretchr/testify/require"

	"github.com/troupe-dev/troupe/actors"
)

var t0 = time.Date(2026, 12, 2, 12, 0, 0, 0, time.UTC)

func TestCheckTrackerTable(t *testing.T) {
	type step struct {
		after   time.Duration // since t0
		result  probeResult
		status  string
		restart bool
	}
	for _, tc := range []struct {
		name           string
		limit          int
		grace          time.Duration
		ignoreWarnings bool
		steps          []step
	}{
		{"no limit never restarts", 0, 0, false, []step{
			{1 * time.Second, probeCritical, CheckFailure, false},
			{2 * time.Second, probeCritical, CheckFailure, false},
			{3 * time.Second, probePassing, CheckSuccess, false},
		}},
		{"limit counts consecutive failures, then starts again", 2, 0, false, []step{
			{1 * time.Second, probeCritical, CheckFailure, false},
			{2 * time.Second, probePassing, CheckSuccess, false},
			{3 * time.Second, probeCritical, CheckFailure, false},
			{4 * time.Second, probeCritical, CheckFailure, true},
			{5 * time.Second, probeCritical, CheckFailure, false},
			{6 * time.Second, probeCritical, CheckFailure, true},
		}},
		{"failures in the grace do not count, also after a restart", 2, 3 * time.Second, false, []step{
			{1 * time.Second, probeCritical, CheckFailure, false},
			{2 * time.Second, probeCritical, CheckFailure, false},
			{3 * time.Second, probeCritical, CheckFailure, false},
			{4 * time.Second, probeCritical, CheckFailure, true},
			{5 * time.Second, probeCritical, CheckFailure, false}, // in the grace after the restart at 4s
			{7 * time.Second, probeCritical, CheckFailure, false},
			{8 * time.Second, probeCritical, CheckFailure, true},
		}},
		{"warnings count unless ignored", 1, 0, false, []step{
			{1 * time.Second, probeWarning, CheckFailure, true},
		}},
		{"ignored warnings", 1, 0, true, []step{
			{1 * time.Second, probeWarning, CheckFailure, false},
			{2 * time.Second, probeCritical, CheckFailure, true},
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tr := newCheckTracker(tc.limit, tc.grace, tc.ignoreWarnings, t0)
			require.Equal(t, CheckPending, tr.status)
			for i, s := range tc.steps {
				status, restart := tr.Step(checkOutcome{result: s.result, at: t0.Add(s.after)})
				require.Equal(t, s.status, status, "step %d", i)
				require.Equal(t, s.restart, restart, "step %d", i)
			}
		})
	}
}

func hostPort(t *testing.T, addr string) (string, int) {
	t.Helper()
	h, p, err := net.SplitHostPort(addr)
	require.NoError(t, err)
	n, err := strconv.Atoi(p)
	require.NoError(t, err)
	return h, n
}

// TestProbeHTTPServerThatStartsFailing probes a real HTTP server: 200
// passes, 429 warns, 500 and a server that answers too late fail.
func TestProbeHTTPServerThatStartsFailing(t *testing.T) {
	var code atomic.Int32
	code.Store(http.StatusOK)
	block := make(chan struct{})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/slow" {
			<-block
		}
		if r.Header.Get("X-Probe") != "v" {
			w.WriteHeader(http.StatusBadRequest) // the check's header is missing
			return
		}
		w.WriteHeader(int(code.Load()))
		_, _ = w.Write([]byte("body"))
	}))
	defer srv.Close()
	defer close(block)
	host, port := hostPort(t, srv.Listener.Addr().String())
	spec := &checkSpec{Type: "http", Address: host, Port: port, Path: "/health", Method: "GET",
		Header: map[string][]string{"X-Probe": {"v"}}, Timeout: time.Second}
	now := func() time.Time { return t0 }
	o := probe(context.Background(), spec, nil, now)
	require.Equal(t, probePassing, o.result, o.output)
	require.Equal(t, 200, o.code)
	require.Contains(t, o.output, "body")
	code.Store(http.StatusTooManyRequests)
	require.Equal(t, probeWarning, probe(context.Background(), spec, nil, now).result)
	code.Store(http.StatusInternalServerError)
	o = probe(context.Background(), spec, nil, now)
	require.Equal(t, probeCritical, o.result)
	require.Equal(t, 500, o.code)
	slow := *spec
	slow.Path, slow.Timeout = "/slow", 50*time.Millisecond
	require.Equal(t, probeCritical, probe(context.Background(), &slow, nil, now).result, "past its timeout")
}

// TestProbeTCPPortThatCloses probes a real listener, then the closed port.
func TestProbeTCPPortThatCloses(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	host, port := hostPort(t, ln.Addr().String())
	spec := &checkSpec{Type: "tcp", Address: host, Port: port, Timeout: time.Second}
	now := func() time.Time { return t0 }
	require.Equal(t, probePassing, probe(context.Background(), spec, nil, now).result)
	require.NoError(t, ln.Close())
	require.Equal(t, probeCritical, probe(context.Background(), spec, nil, now).result)
}

// TestProbeScript runs real processes in the task's directory (no
// driver handle): exit 0 passes, 1 warns, 2 and a timeout fail.
func TestProbeScript(t *testing.T) {
	root := t.TempDir()
	require.NoError(t, os.MkdirAll(TaskDir(root, "a1", "t"), 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(TaskDir(root, "a1", "t"), "marker"), []byte("here\n"), 0o600))
	run := (&Actor{spec: &Spec{}}).execScript(root, "a1")
	now := func() time.Time { return t0 }
	for _, tc := range []struct {
		script string
		want   probeResult
		output string
	}{
		{"cat marker", probePassing, "here"},
		{"echo warn; exit 1", probeWarning, "warn"},
		{"echo bad >&2; exit 2", probeCritical, "bad"},
		{"sleep 5", probeCritical, "timed out"},
	} {
		spec := &checkSpec{Type: "script", Task: "t", Command: "/bin/sh", Args: []string{"-c", tc.script}, Timeout: 500 * time.Millisecond}
		o := probe(context.Background(), spec, run, now)
		require.Equal(t, tc.want, o.result, "%s: %s", tc.script, o.output)
		require.Contains(t, o.output, tc.output, tc.script)
	}
}

// collector is a parent that spawns one check actor and forwards what it
// sends.
type collector struct {
	props *actor.Props
	out   chan any
}

func (c *collector) Receive(ctx actor.Context) {
	switch m := ctx.Message().(type) {
	case *actor.Started:
		ctx.Spawn(c.props)
	case *checkResult, *checkRestart:
		c.out <- m
	}
}

// TestCheckActorTicksOnTheInjectedClock: the first probe runs at start,
// the next ones only when the fake clock passes the interval; after
// limit failures the actor asks for its task's restart.
func TestCheckActorTicksOnTheInjectedClock(t *testing.T) {
	var code atomic.Int32
	code.Store(http.StatusOK)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { w.WriteHeader(int(code.Load())) }))
	defer srv.Close()
	host, port := hostPort(t, srv.Listener.Addr().String())
	clock := actors.NewFakeClock(t0)
	sys := actors.NewSystem(nil)
	defer sys.Shutdown()
	spec := &checkSpec{ID: "c1", Name: "web", Task: "t", Type: "http", Address: host, Port: port, Path: "/",
		Interval: 10 * time.Second, Timeout: time.Second, Limit: 2}
	col := &collector{props: sys.Props("check", newCheckActor(spec, clock, nil, sys.Logger)), out: make(chan any, 16)}
	pid := sys.Root.Spawn(actor.PropsFromProducer(func() actor.Actor { return col }))
	defer sys.Root.Stop(pid)

	next := func() any {
		select {
		case m := <-col.out:
			return m
		case <-time.After(10 * time.Second):
			t.Fatal("no message from the check actor")
			return nil
		}
	}
	res := next().(*checkResult)
	require.Equal(t, CheckSuccess, res.status)
	require.Eventually(t, func() bool { return clock.Pending() == 1 }, 5*time.Second, time.Millisecond)
	select {
	case m := <-col.out:
		t.Fatalf("a probe before the interval: %v", m)
	default:
	}
	code.Store(http.StatusServiceUnavailable)
	clock.Advance(10 * time.Second)
	require.Equal(t, CheckFailure, next().(*checkResult).status)
	require.Eventually(t, func() bool { return clock.Pending() == 1 }, 5*time.Second, time.Millisecond)
	clock.Advance(10 * time.Second)
	require.Equal(t, CheckFailure, next().(*checkResult).status)
	rs := next().(*checkRestart)
	require.Equal(t, "t", rs.task)
	require.Equal(t, "web", rs.check)
}

func TestCheckSetVerdict(t *testing.T) {
	s := &checkSet{specs: []*checkSpec{{ID: "a"}, {ID: "b"}}, results: map[string]*CheckStatus{
		"a": {Status: CheckPending}, "b": {Status: CheckPending}}}
	type want struct{ changed, passing bool }
	steps := []struct {
		id, status string
		want       want
	}{
		{"a", CheckSuccess, want{false, false}}, // b has no result yet
		{"b", CheckSuccess, want{true, true}},   // all pass
		{"b", CheckSuccess, want{false, true}},  // no change
		{"a", CheckFailure, want{true, false}},  // one fails
		{"a", CheckFailure, want{false, false}}, // still failing
		{"a", CheckSuccess, want{true, true}},   // all pass again
	}
	for i, st := range steps {
		s.results[st.id] = &CheckStatus{Status: st.status}
		changed, passing := s.verdict()
		require.Equal(t, st.want, want{changed, passing}, "step %d", i)
	}
	early := &checkSet{specs: []*checkSpec{{ID: "a"}, {ID: "b"}}, results: map[string]*CheckStatus{"a": {Status: CheckFailure}}}
	changed, passing := early.verdict()
	require.True(t, changed, "a failure is known before every check has a result")
	require.False(t, passing)
}
