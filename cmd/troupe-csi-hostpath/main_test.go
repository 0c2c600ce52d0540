package main

import (
	"bytes"
	"context"
	"io"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"github.com/troupe-dev/troupe/runtime/csi"
	"github.com/troupe-dev/troupe/runtime/csi/hostpath"
	"google.golang.org/grpc/codes"
)

func TestParseFault(t *testing.T) {
	cases := []struct {
		in   string
		want fault
		ok   bool
	}{
		{"NodeUnpublishVolume=Internal:3", fault{method: "NodeUnpublishVolume", code: codes.Internal, times: 3}, true},
		{"ControllerPublishVolume/vol1=UNAVAILABLE:-1", fault{method: "ControllerPublishVolume", volumeID: "vol1", code: codes.Unavailable, times: -1}, true},
		{"NodeUnpublishVolume", fault{}, false},
		{"NodeUnpublishVolume=Internal", fault{}, false},
		{"NodeUnpublishVolume=Bogus:1", fault{}, false},
		{"NodeUnpublishVolume=Internal:x", fault{}, false},
	}
	for _, tc := range cases {
		t.Run(tc.in, func(t *testing.T) {
			got, err := parseFault(tc.in)
			if !tc.ok {
				require.Error(t, err)
				return
			}
			require.NoError(t, err)
			require.Equal(t, tc.want, got)
		})
	}
}

func TestBadArguments(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	require.Equal(t, 2, run(ctx, []string{"-nope"}, io.Discard))
	require.Equal(t, 2, run(ctx, []string{"extra"}, io.Discard))
	require.Equal(t, 2, run(ctx, []string{"-fail", "x"}, io.Discard))
	var stderr bytes.Buffer
	require.Equal(t, 1, run(ctx, []string{"-root", dir, "-node-id", "n", "-mode", "both"}, &stderr))
	require.Contains(t, stderr.String(), `mode "both"`)
	require.Equal(t, 1, run(ctx, []string{"-root", dir, "-node-id", "n", "-fail", "Nope=Internal:1",
		"-endpoint", filepath.Join(dir, "s.sock")}, io.Discard))
	require.Equal(t, 0, run(ctx, []string{"-h"}, io.Discard))
}

func TestRunServesUntilCanceled(t *testing.T) {
	dir := t.TempDir()
	sock, ctlSock := filepath.Join(dir, "csi.sock"), filepath.Join(dir, "ctl.sock")
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	exit := make(chan int, 1)
	go func() {
		exit <- run(ctx, []string{"-endpoint", "unix://" + sock, "-root", filepath.Join(dir, "vols"),
			"-node-id", "node-7", "-mode", "node", "-control", ctlSock,
			"-fail", "NodeUnpublishVolume=Internal:1"}, io.Discard)
	}()
	callCtx, callCancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer callCancel()
	var c csi.Client
	require.Eventually(t, func() bool {
		var err error
		c, err = csi.Dial(callCtx, sock)
		return err == nil
	}, 10*time.Second, 5*time.Millisecond)
	defer c.Close()

	info, err := c.NodeInfo(callCtx)
	require.NoError(t, err)
	require.Equal(t, "node-7", info.NodeID)
	_, err = c.ControllerCapabilities(callCtx)
	require.Equal(t, codes.Unimplemented, csi.Code(err), "node mode has no controller")
	err = c.NodeUnpublish(callCtx, "v", filepath.Join(dir, "t"))
	require.Equal(t, codes.Internal, csi.Code(err), "-fail applies")
	require.NoError(t, c.NodeUnpublish(callCtx, "v", filepath.Join(dir, "t")))

	calls, err := hostpath.NewControl(ctlSock).Calls(callCtx)
	require.NoError(t, err)
	require.Len(t, calls, 3, "NodeGetInfo and two NodeUnpublishVolume; unserved services are not recorded")

	cancel()
	select {
	case code := <-exit:
		require.Equal(t, 0, code)
	case <-callCtx.Done():
		t.Fatal("run did not return after cancel")
	}
	require.NoFileExists(t, sock, "the socket is removed")
}

func TestParseTopology(t *testing.T) {
	cases := []struct {
		in   string
		want map[string]string
		ok   bool
	}{
		{"zone=a", map[string]string{"zone": "a"}, true},
		{"zone=a, rack=r1", map[string]string{"zone": "a", "rack": "r1"}, true},
		{"", nil, false},
		{"zone", nil, false},
		{"zone=", nil, false},
		{"=a", nil, false},
		{"zone=a,zone=b", nil, false},
	}
	for _, tc := range cases {
		t.Run(tc.in, func(t *testing.T) {
			got, err := parseTopology(tc.in)
			if !tc.ok {
				require.Error(t, err)
				return
			}
			require.NoError(t, err)
			require.Equal(t, tc.want, got)
		})
	}
	opts, err := parseArgs([]string{"-topology", "zone=b,rack=r2"}, io.Discard)
	require.NoError(t, err)
	require.Equal(t, map[string]string{"zone": "b", "rack": "r2"}, opts.cfg.Topology)
	require.Equal(t, 2, run(context.Background(), []string{"-topology", "zone"}, io.Discard))
}
