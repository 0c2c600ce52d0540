package hostpath

import (
	"context"
	"path/filepath"
	"testing"
	"time"

	csipb "github.com/container-storage-interface/spec/lib/go/csi"
	"github.com/stretchr/testify/require"
	"google.golang.org/grpc/codes"
)

func TestFailNext(t *testing.T) {
	e := start(t, Config{})
	e.create("v1")
	e.create("v2")
	require.NoError(t, e.p.FailNext("ControllerPublishVolume", codes.Unavailable, 2))
	require.NoError(t, e.p.FailNextVolume("NodeUnpublishVolume", "v2", codes.Internal, 1))

	require.Equal(t, codes.Unavailable, code(e.cpublish("v1", "node-1")))
	require.Equal(t, codes.Unavailable, code(e.cpublish("v1", "node-1")))
	require.NoError(t, e.cpublish("v1", "node-1"))

	require.NoError(t, e.unpublish("v1"), "the fault is for v2")
	require.Equal(t, codes.Internal, code(e.unpublish("v2")))
	require.NoError(t, e.unpublish("v2"))

	require.NoError(t, e.p.FailNext("Probe", codes.Internal, -1))
	for range 3 {
		_, err := e.id.Probe(e.ctx, &csipb.ProbeRequest{})
		require.Equal(t, codes.Internal, code(err))
	}
	e.p.ResetFaults()
	_, err := e.id.Probe(e.ctx, &csipb.ProbeRequest{})
	require.NoError(t, err)
}

func TestFaultValidation(t *testing.T) {
	p, err := New(Config{Root: t.TempDir(), NodeID: "n"})
	require.NoError(t, err)
	require.ErrorIs(t, p.FailNext("NodeUnpublish", codes.Internal, 1), ErrUnknownMethod)
	require.ErrorIs(t, p.FailNext("NodeUnpublishVolume", codes.OK, 1), ErrInvalidFault)
	require.ErrorIs(t, p.FailNext("NodeUnpublishVolume", codes.Internal, 0), ErrInvalidFault)
	require.ErrorIs(t, p.SetLatency("Nope", time.Second), ErrUnknownMethod)
	require.ErrorIs(t, p.SetLatency("", -time.Second), ErrInvalidFault)
	require.ErrorIs(t, p.Hang("Nope", ""), ErrUnknownMethod)
	require.Contains(t, Methods(), "NodeUnpublishVolume")
	require.Contains(t, Methods(), "GetPluginInfo")
}

func TestCallsAreRecorded(t *testing.T) {
	e := start(t, Config{})
	e.create("v1")
	require.NoError(t, e.cpublish("v1", "node-1"))
	require.Equal(t, codes.NotFound, code(e.cunpublish("nope", "node-1")))
	calls := e.p.Calls()
	require.Len(t, calls, 3)
	require.Equal(t, Call{Method: "CreateVolume", VolumeID: "v1", Code: "OK"}, stripTimes(calls[0]))
	require.Equal(t, Call{Method: "ControllerPublishVolume", VolumeID: "v1", NodeID: "node-1", Code: "OK"}, stripTimes(calls[1]))
	require.Equal(t, Call{Method: "ControllerUnpublishVolume", VolumeID: "nope", NodeID: "node-1", Code: "NotFound"}, stripTimes(calls[2]))
	for _, c := range calls {
		require.False(t, c.End.Before(c.Start))
	}
}

func stripTimes(c Call) Call {
	c.Start, c.End = time.Time{}, time.Time{}
	return c
}

func TestCallRecordsAreCapped(t *testing.T) {
	e := start(t, Config{MaxCalls: 4})
	for range 10 {
		_, err := e.id.Probe(e.ctx, &csipb.ProbeRequest{})
		require.NoError(t, err)
	}
	require.LessOrEqual(t, len(e.p.Calls()), 4)
	require.NotEmpty(t, e.p.Calls())
}

func TestLatency(t *testing.T) {
	e := start(t, Config{})
	require.NoError(t, e.p.SetLatency("Probe", 50*time.Millisecond))
	begin := time.Now()
	_, err := e.id.Probe(e.ctx, &csipb.ProbeRequest{})
	require.NoError(t, err)
	require.GreaterOrEqual(t, time.Since(begin), 50*time.Millisecond)
	c := e.p.Calls()[0]
	require.GreaterOrEqual(t, c.End.Sub(c.Start), 50*time.Millisecond)

	require.NoError(t, e.p.SetLatency("", time.Hour))
	ctx, cancel := context.WithTimeout(e.ctx, 20*time.Millisecond)
	defer cancel()
	_, err = e.id.GetPluginInfo(ctx, &csipb.GetPluginInfoRequest{})
	require.Equal(t, codes.DeadlineExceeded, code(err))
}

func TestHangAndRelease(t *testing.T) {
	e := start(t, Config{})
	require.NoError(t, e.p.Hang("NodeUnpublishVolume", "v1"))
	done := make(chan error, 1)
	go func() { done <- e.unpublish("v1") }()
	require.Eventually(t, func() bool { return len(e.p.InFlight()) == 1 }, 5*time.Second, time.Millisecond)
	require.NoError(t, e.unpublish("v2"), "other volumes pass")
	require.Equal(t, "v1", e.p.InFlight()[0].VolumeID, "still hung")
	e.p.Release("NodeUnpublishVolume", "v1")
	select {
	case err := <-done:
		require.NoError(t, err)
	case <-e.ctx.Done():
		t.Fatal("released call did not return")
	}
}

func TestStopReleasesHungCalls(t *testing.T) {
	e := start(t, Config{})
	require.NoError(t, e.p.Hang("NodeUnpublishVolume", ""))
	done := make(chan error, 1)
	go func() { done <- e.unpublish("v1") }()
	require.Eventually(t, func() bool { return len(e.p.InFlight()) == 1 }, 5*time.Second, time.Millisecond)
	require.Equal(t, "NodeUnpublishVolume", e.p.InFlight()[0].Method)
	e.p.Stop()
	select {
	case err := <-done:
		require.Error(t, err)
	case <-e.ctx.Done():
		t.Fatal("hung call survived Stop")
	}

	// The plugin serves again after a restart, hangs and all released.
	sock := filepath.Join(filepath.Dir(e.sock), "again.sock")
	require.NoError(t, e.p.Start(context.Background(), sock))
	require.ErrorIs(t, e.p.Start(context.Background(), sock), ErrAlreadyStarted)
}

func TestRaceMode(t *testing.T) {
	e := start(t, Config{})
	e.create("v1")
	e.create("v2")
	inflight := func() int {
		e.p.faults.mu.Lock()
		defer e.p.faults.mu.Unlock()
		return e.p.faults.inflight
	}
	for _, race := range []bool{true, false} {
		e.p.SetRaceMode(race)
		require.NoError(t, e.cpublish("v1", "node-1"), "alone, no race")
		require.NoError(t, e.p.Hang("ControllerPublishVolume", "v1"))
		done := make(chan error, 1)
		go func() { done <- e.cpublish("v1", "node-1") }()
		require.Eventually(t, func() bool { return inflight() == 1 }, 5*time.Second, time.Millisecond)
		if race {
			require.Equal(t, codes.Internal, code(e.cpublish("v2", "node-1")), "concurrent with the hung publish")
			require.Equal(t, codes.Internal, code(e.cunpublish("v2", "node-1")))
		} else {
			require.NoError(t, e.cpublish("v2", "node-1"), "race mode off")
			require.NoError(t, e.cunpublish("v2", "node-1"))
		}
		e.p.Release("ControllerPublishVolume", "v1")
		require.NoError(t, <-done)
		require.Zero(t, inflight())
		require.NoError(t, e.cpublish("v2", "node-1"), "serial calls pass")
		require.NoError(t, e.cunpublish("v2", "node-1"))
	}
}
