package cluster

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"net"
	"sync/atomic"
	"testing"
	"time"

	"github.com/hashicorp/raft"
	"github.com/stretchr/testify/require"

	"github.com/troupe-dev/troupe/cluster/state"
	"github.com/troupe-dev/troupe/messages"
)

const waitFor = 10 * time.Second

// server is a Raft over a state.FSM, for tests.
type server struct {
	*Raft
	fsm      *countingFSM
	store    *state.Store
	cfg      RaftConfig
	shutdown bool
}

// countingFSM counts Restore calls.
type countingFSM struct {
	*state.FSM
	restores atomic.Int32
}

func (f *countingFSM) Restore(rc io.ReadCloser) error {
	f.restores.Add(1)
	return f.FSM.Restore(rc)
}

func testLogger(t testing.TB) *slog.Logger {
	return slog.New(slog.NewTextHandler(tWriter{t}, &slog.HandlerOptions{Level: slog.LevelWarn}))
}

type tWriter struct{ t testing.TB }

func (w tWriter) Write(p []byte) (int, error) { w.t.Log(string(p)); return len(p), nil }

func startServer(t testing.TB, cfg RaftConfig) *server {
	t.Helper()
	cfg.Logger = testLogger(t)
	store := state.NewStore()
	fsm := &countingFSM{FSM: state.NewFSM(store, cfg.Logger)}
	r, err := NewRaft(cfg, fsm)
	require.NoError(t, err)
	s := &server{Raft: r, fsm: fsm, store: store, cfg: cfg}
	t.Cleanup(func() { s.stop(t) })
	return s
}

func (s *server) stop(t testing.TB) {
	if !s.shutdown {
		s.shutdown = true
		require.NoError(t, s.Shutdown())
	}
}

func waitLeader(t testing.TB, s *server) {
	t.Helper()
	require.Eventually(t, s.IsLeader, waitFor, 10*time.Millisecond, "never became leader")
}

func startBenchServer(b *testing.B) *server {
	s := startServer(b, RaftConfig{NodeID: "s1", DataDir: b.TempDir(), Bootstrap: true})
	waitLeader(b, s)
	return s
}

func registerCmd(id string) *messages.Command {
	return &messages.Command{Cmd: &messages.Command_RegisterJob{RegisterJob: &messages.RegisterJob{
		Job:  &messages.Job{ID: id, Name: id, Namespace: "default", Type: "service"},
		Eval: &messages.Evaluation{ID: "eval-" + id, Namespace: "default", JobID: id, Status: "pending"},
	}}}
}

func TestSingleServerSurvivesRestart(t *testing.T) {
	dir := t.TempDir()
	cfg := RaftConfig{NodeID: "s1", DataDir: dir, Bootstrap: true}
	s := startServer(t, cfg)
	waitLeader(t, s)

	resp, index, err := s.Apply(context.Background(), registerCmd("web"))
	require.NoError(t, err)
	res, ok := resp.(*state.RegisterJobResult)
	require.True(t, ok, "response %T", resp)
	require.Equal(t, index, res.Index)
	require.Equal(t, "eval-web", res.EvalID)
	require.FileExists(t, dir+"/raft/raft.db")
	s.stop(t)

	again := startServer(t, cfg)
	waitLeader(t, again)
	require.Eventually(t, func() bool { return again.store.Snapshot().JobByID("default", "web") != nil },
		waitFor, 10*time.Millisecond, "job replayed from the log")
	require.Zero(t, again.fsm.restores.Load(), "no snapshot was taken")
	peers, err := again.Peers()
	require.NoError(t, err)
	require.Equal(t, []Peer{{ID: "s1", Address: again.LocalAddr(), Voter: true, Leader: true}}, peers)
}

func TestRestartRestoresFromSnapshot(t *testing.T) {
	dir := t.TempDir()
	cfg := RaftConfig{NodeID: "s1", DataDir: dir, Bootstrap: true, TrailingLogs: 1}
	s := startServer(t, cfg)
	waitLeader(t, s)
	for i := range 5 {
		_, _, err := s.Apply(context.Background(), registerCmd(fmt.Sprint("job", i)))
		require.NoError(t, err)
	}
	require.NoError(t, s.Snapshot())
	_, _, err := s.Apply(context.Background(), registerCmd("after-snapshot"))
	require.NoError(t, err)
	s.stop(t)

	again := startServer(t, cfg)
	require.Equal(t, int32(1), again.fsm.restores.Load(), "restored from the snapshot at start")
	require.NotEqual(t, "0", again.Stats()["last_snapshot_index"])
	waitLeader(t, again)
	require.Eventually(t, func() bool { return len(again.store.Snapshot().Jobs()) == 6 }, waitFor, 10*time.Millisecond)
}

func TestApplyReturnsFSMErrors(t *testing.T) {
	s := startServer(t, RaftConfig{NodeID: "s1", Bootstrap: true})
	waitLeader(t, s)
	cmd := &messages.Command{Cmd: &messages.Command_DeregisterJob{DeregisterJob: &messages.DeregisterJob{Namespace: "default", JobID: "nope"}}}
	_, index, err := s.Apply(context.Background(), cmd)
	require.ErrorIs(t, err, state.ErrJobNotFound)
	require.NotZero(t, index)
	require.NotZero(t, cmd.Time, "stamped by the proposer")

	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	_, _, err = s.Apply(ctx, registerCmd("late"))
	require.ErrorIs(t, err, context.Canceled)
	require.Nil(t, s.store.Snapshot().JobByID("default", "late"), "not proposed")
}

func TestRemoveServerRefusesLastVoter(t *testing.T) {
	s := startServer(t, RaftConfig{NodeID: "s1", Bootstrap: true})
	waitLeader(t, s)
	require.ErrorIs(t, s.RemoveServer("s1"), ErrLastVoter)
	require.ErrorIs(t, s.RemoveServer("nope"), ErrUnknownServer)
}

func TestNewRaftRejectsBadConfig(t *testing.T) {
	tests := []struct {
		name string
		cfg  RaftConfig
	}{
		{"no node ID", RaftConfig{}},
		{"election shorter than heartbeat", RaftConfig{NodeID: "s1", HeartbeatTimeout: time.Second, ElectionTimeout: 10 * time.Millisecond}},
		{"bad advertise", RaftConfig{NodeID: "s1", BindAddr: "127.0.0.1:0", Advertise: "not an address"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := NewRaft(tt.cfg, state.NewFSM(state.NewStore(), nil))
			require.ErrorIs(t, err, ErrConfig)
		})
	}
}

// freePort reserves a TCP port on 127.0.0.1 and releases it.
func freePort(t *testing.T) string {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	addr := l.Addr().String()
	require.NoError(t, l.Close())
	return addr
}

// startTCP starts a server on a TCP transport. Its timeouts leave room
// for a loaded CI machine (the whole suite runs packages at once): with
// 100 ms a late heartbeat could move the leadership mid-test.
func startTCP(t *testing.T, id string, bootstrap bool) *server {
	return startServer(t, RaftConfig{
		NodeID: id, DataDir: t.TempDir(), BindAddr: freePort(t), Bootstrap: bootstrap,
		HeartbeatTimeout: 500 * time.Millisecond, ElectionTimeout: 500 * time.Millisecond, LeaderLeaseTimeout: 250 * time.Millisecond,
	})
}

func TestThreeServersOverTCP(t *testing.T) {
	s1 := startTCP(t, "s1", true)
	waitLeader(t, s1)
	s2, s3 := startTCP(t, "s2", false), startTCP(t, "s3", false)
	require.NoError(t, s1.AddVoter("s2", s2.LocalAddr()))
	require.NoError(t, s1.AddVoter("s3", s3.LocalAddr()))

	_, _, err := s1.Apply(context.Background(), registerCmd("web"))
	require.NoError(t, err)
	for _, s := range []*server{s2, s3} {
		require.Eventually(t, func() bool { return s.store.Snapshot().JobByID("default", "web") != nil },
			waitFor, 10*time.Millisecond, "replicated to %s", s.cfg.NodeID)
		addr, id := s.Leader()
		require.Equal(t, "s1", id)
		require.Equal(t, s1.LocalAddr(), addr)
	}

	_, _, err = s2.Apply(context.Background(), registerCmd("refused"))
	require.ErrorIs(t, err, ErrNotLeader)
	require.ErrorIs(t, err, raft.ErrNotLeader)
	require.ErrorIs(t, s2.AddVoter("s4", "127.0.0.1:1"), ErrNotLeader)

	peers, err := s1.Peers()
	require.NoError(t, err)
	require.Len(t, peers, 3)
	leaders := 0
	for _, p := range peers {
		require.True(t, p.Voter)
		if p.Leader {
			leaders++
			require.Equal(t, "s1", p.ID)
		}
	}
	require.Equal(t, 1, leaders)

	require.NoError(t, s1.RemoveServer("s3"))
	peers, err = s1.Peers()
	require.NoError(t, err)
	require.Len(t, peers, 2)
}

func TestLeaderChTellsLeadership(t *testing.T) {
	s := startServer(t, RaftConfig{NodeID: "s1", Bootstrap: true})
	select {
	case isLeader := <-s.LeaderCh():
		require.True(t, isLeader)
	case <-time.After(waitFor):
		t.Fatal("no leadership notification")
	}
}
