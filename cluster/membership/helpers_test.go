package membership

import (
	"fmt"
	"log/slog"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"
)

func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m)
}

// waitFor bounds every poll in this package's tests.
const waitFor = 10 * time.Second

// tLogWriter sends log lines to t.Log until the test ends; writes after
// that are dropped (memberlist goroutines may still be winding down).
type tLogWriter struct {
	mu   sync.Mutex
	t    testing.TB
	done bool
}

func (w *tLogWriter) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if !w.done {
		w.t.Log(string(p))
	}
	return len(p), nil
}

func testLogger(t testing.TB) *slog.Logger {
	w := &tLogWriter{t: t}
	t.Cleanup(func() {
		w.mu.Lock()
		defer w.mu.Unlock()
		w.done = true
	})
	return slog.New(slog.NewTextHandler(w, &slog.HandlerOptions{Level: slog.LevelInfo}))
}

// checkLeaks verifies, after every later cleanup (the members' Shutdown)
// has run, that no goroutine of this test survives.
func checkLeaks(t *testing.T) {
	t.Cleanup(func() { goleak.VerifyNone(t) })
}

func testMeta(name, role, region string) Meta {
	m := Meta{
		Role: role, Region: region, Datacenter: "dc1", NodeID: "id-" + name, NodeName: name,
		RPCAddr: "127.0.0.1:4647", HTTPAddr: "127.0.0.1:4646", Build: "0.1.0",
	}
	if role == RoleServer {
		m.Voter, m.BootstrapExpect = true, 3
	}
	return m
}

// fastConfig binds loopback on an OS-chosen port with failure detection
// shrunk so that a dead member is noticed in well under a second.
func fastConfig(t testing.TB, meta Meta) Config {
	return Config{
		BindAddr:         "127.0.0.1",
		Meta:             meta,
		ProbeInterval:    50 * time.Millisecond,
		ProbeTimeout:     25 * time.Millisecond,
		GossipInterval:   10 * time.Millisecond,
		SuspicionMult:    2,
		PushPullInterval: 300 * time.Millisecond,
		TCPTimeout:       500 * time.Millisecond,
		BroadcastTimeout: 2 * time.Second,
		Logger:           testLogger(t).With("node", meta.NodeName),
	}
}

func start(t testing.TB, cfg Config) *Membership {
	t.Helper()
	m, err := New(cfg)
	require.NoError(t, err)
	t.Cleanup(func() { require.NoError(t, m.Shutdown()) })
	return m
}

// startCluster starts one member per meta, joins all to the first, and
// waits until every member sees every other alive.
func startCluster(t testing.TB, metas ...Meta) []*Membership {
	t.Helper()
	ms := make([]*Membership, len(metas))
	for i, meta := range metas {
		ms[i] = start(t, fastConfig(t, meta))
		if i > 0 {
			n, err := ms[i].Join([]string{ms[0].GossipAddr()})
			require.NoError(t, err)
			require.Equal(t, 1, n)
		}
	}
	for _, m := range ms {
		require.Eventually(t, func() bool { return countStatus(m, StatusAlive) == len(metas) },
			waitFor, 10*time.Millisecond, "%s sees %d alive of %d", m.cfg.Name, countStatus(m, StatusAlive), len(metas))
	}
	return ms
}

func countStatus(m *Membership, status string) int {
	n := 0
	for _, mem := range m.Members() {
		if mem.Status == status {
			n++
		}
	}
	return n
}

func memberNamed(m *Membership, name string) (Member, bool) {
	for _, mem := range m.Members() {
		if mem.Name == name {
			return mem, true
		}
	}
	return Member{}, false
}

func statusOf(m *Membership, name string) string {
	mem, ok := memberNamed(m, name)
	if !ok {
		return "unknown"
	}
	return mem.Status
}

// waitEvent reads m's events until one matches, failing after waitFor.
func waitEvent(t testing.TB, m *Membership, typ EventType, name string) Event {
	t.Helper()
	deadline := time.NewTimer(waitFor)
	defer deadline.Stop()
	var seen []string
	for {
		select {
		case ev, ok := <-m.Events():
			require.True(t, ok, "events channel closed")
			if ev.Type == typ && ev.Member.Name == name {
				return ev
			}
			seen = append(seen, fmt.Sprintf("%s %s", ev.Type, ev.Member.Name))
		case <-deadline.C:
			require.FailNow(t, "no event", "want %s %s; saw %v", typ, name, seen)
		}
	}
}

// drain empties m's event channel and returns what was in it.
func drain(m *Membership) []Event {
	var out []Event
	for {
		select {
		case ev := <-m.Events():
			out = append(out, ev)
		default:
			return out
		}
	}
}
