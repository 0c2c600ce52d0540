package hostpath

import (
	"path/filepath"
	"testing"
	"time"

	csipb "github.com/container-storage-interface/spec/lib/go/csi"
	"github.com/stretchr/testify/require"
	"google.golang.org/grpc/codes"
)

func TestControlAPI(t *testing.T) {
	e := start(t, Config{})
	ctlSock := filepath.Join(filepath.Dir(e.sock), "ctl.sock")
	require.NoError(t, e.p.StartControl("unix://"+ctlSock))
	require.ErrorIs(t, e.p.StartControl(ctlSock), ErrAlreadyStarted)
	ctl := NewControl("unix://" + ctlSock)
	e.create("v1")

	require.NoError(t, ctl.FailNext(e.ctx, "NodeUnpublishVolume", "v1", codes.Internal, 2))
	require.Equal(t, codes.Internal, code(e.unpublish("v1")))
	require.Equal(t, codes.Internal, code(e.unpublish("v1")))
	require.NoError(t, e.unpublish("v1"))

	require.NoError(t, ctl.SetRaceMode(e.ctx, true))
	require.NoError(t, ctl.Hang(e.ctx, "ControllerPublishVolume", ""))
	done := make(chan error, 1)
	go func() { done <- e.cpublish("v1", "node-1") }()
	require.Eventually(t, func() bool { return len(e.p.InFlight()) == 1 }, 5*time.Second, time.Millisecond)
	require.Equal(t, codes.Internal, code(e.cunpublish("v1", "node-1")), "race")
	require.NoError(t, ctl.Release(e.ctx, "ControllerPublishVolume", ""))
	require.NoError(t, <-done)

	require.NoError(t, ctl.SetLatency(e.ctx, "", 30*time.Millisecond))
	begin := time.Now()
	_, err := e.id.Probe(e.ctx, &csipb.ProbeRequest{})
	require.NoError(t, err)
	require.GreaterOrEqual(t, time.Since(begin), 30*time.Millisecond)

	require.NoError(t, ctl.Reset(e.ctx))
	require.NoError(t, e.cunpublish("v1", "node-1"), "race mode off after reset")

	calls, err := ctl.Calls(e.ctx)
	require.NoError(t, err)
	local := e.p.Calls()
	require.Len(t, calls, len(local))
	for i := range calls {
		require.Equal(t, stripTimes(local[i]), stripTimes(calls[i]))
		require.True(t, local[i].Start.Equal(calls[i].Start))
	}
	require.Equal(t, "CreateVolume", calls[0].Method)
	require.Equal(t, "Internal", calls[1].Code)

	err = ctl.FailNext(e.ctx, "Nope", "", codes.Internal, 1)
	require.ErrorIs(t, err, ErrControl)
	require.Contains(t, err.Error(), "unknown method")
	require.ErrorIs(t, ctl.SetLatency(e.ctx, "Probe", -time.Second), ErrControl)

	e.p.Stop()
	_, err = ctl.Calls(e.ctx)
	require.ErrorIs(t, err, ErrControl, "the control socket stops with the plugin")
}

func TestParseCode(t *testing.T) {
	cases := map[string]codes.Code{
		"Internal": codes.Internal, "INTERNAL": codes.Internal, "internal": codes.Internal,
		"NotFound": codes.NotFound, "NOT_FOUND": codes.NotFound, "not_found": codes.NotFound,
		"DEADLINE_EXCEEDED": codes.DeadlineExceeded, "CANCELLED": codes.Canceled, "Canceled": codes.Canceled,
		"14": codes.Unavailable, "Unavailable": codes.Unavailable,
	}
	for in, want := range cases {
		t.Run(in, func(t *testing.T) {
			got, err := ParseCode(in)
			require.NoError(t, err)
			require.Equal(t, want, got)
		})
	}
	for _, bad := range []string{"", "nope", "17", "-1"} {
		t.Run("bad "+bad, func(t *testing.T) {
			_, err := ParseCode(bad)
			require.ErrorIs(t, err, ErrInvalidFault)
		})
	}
}
