//go:build linux

package cni

import (
	"context"
	"fmt"
	"net"
	"os"
	"testing"

	"github.com/stretchr/testify/require"
)

func TestRestoreChecksAnExistingNetnsAndKeepsIt(t *testing.T) {
	tn := newTestNet(t)
	ctx := testCtx(t)
	id, port := newID(), mustFreePort(t)
	req := SetupRequest{AllocID: id, Ports: []PortMapping{{HostPort: port, ContainerPort: 80}}}
	res, err := tn.Setup(ctx, req)
	require.NoError(t, err)
	serveIn(t, res.NetnsPath, 80, "still here")
	inode := nsInode(t, res.NetnsPath)

	// A new Network, as after an agent restart.
	restarted, err := New(tn.cfg)
	require.NoError(t, err)
	got, err := restarted.Restore(ctx, id, res.RawResult, req)
	require.NoError(t, err)
	require.Equal(t, res.IP, got.IP)
	require.Equal(t, res.Gateway, got.Gateway)
	require.Equal(t, res.NetnsPath, got.NetnsPath)
	require.Equal(t, res.Ports, got.Ports)
	require.JSONEq(t, string(res.RawResult), string(got.RawResult))
	require.Equal(t, inode, nsInode(t, got.NetnsPath), "CHECK passed: the netns is kept")
	require.False(t, got.Recreated)
	require.Equal(t, []string{res.IP.String()}, reservedAddrs(t, tn))
	requireGreeting(t, "", fmt.Sprintf("127.0.0.1:%d", port), "still here")
}

func TestRestoreRecreatesANetworkThatFailsCheck(t *testing.T) {
	tn := newTestNet(t)
	ctx := testCtx(t)
	id, port := newID(), mustFreePort(t)
	req := SetupRequest{AllocID: id, Ports: []PortMapping{{HostPort: port, ContainerPort: 80}}}
	res, err := tn.Setup(ctx, req)
	require.NoError(t, err)
	inode := nsInode(t, res.NetnsPath)
	require.NoError(t, checkErr(ctx, tn.Network, req, res.RawResult))
	// A mapping that is not there fails the check.
	other := req
	other.Ports = []PortMapping{{HostPort: port, ContainerPort: 81}}
	require.ErrorContains(t, checkErr(ctx, tn.Network, other, res.RawResult), "no DNAT of port")
	// Someone flushed the allocation's port forwarding: CHECK fails.
	require.NoError(t, sweep(ctx, func(_ string, r rule) bool {
		_, owner := r.owner()
		return owner == id && r.chain == "CNI-HOSTPORT-DNAT"
	}))
	require.ErrorIs(t, checkErr(ctx, tn.Network, req, res.RawResult), ErrPlugin)

	got, err := tn.Restore(ctx, id, res.RawResult, req)
	require.NoError(t, err)
	require.NotEqual(t, inode, nsInode(t, got.NetnsPath), "a new netns")
	require.True(t, got.Recreated)
	require.True(t, tn.Subnet().Contains(got.IP))
	require.Len(t, reservedAddrs(t, tn), 1, "the old reservation is released")
	require.Zero(t, tn.delFailures.Load())
	require.NoError(t, checkErr(ctx, tn.Network, req, got.RawResult))
	serveIn(t, got.NetnsPath, 80, "recreated")
	requireGreeting(t, "", fmt.Sprintf("127.0.0.1:%d", port), "recreated")

	// Without a persisted result there is nothing to check against.
	inode = nsInode(t, got.NetnsPath)
	again, err := tn.Restore(ctx, id, nil, req)
	require.NoError(t, err)
	require.NotEqual(t, inode, nsInode(t, again.NetnsPath))
	require.Len(t, reservedAddrs(t, tn), 1)
}

func TestRestoreAfterARebootSetsUpAgainWithoutConflicts(t *testing.T) {
	tn := newTestNet(t)
	ctx := testCtx(t)
	a, b := newID(), newID()
	reqA := SetupRequest{AllocID: a, Ports: []PortMapping{{HostPort: mustFreePort(t), ContainerPort: 80}}}
	reqB := SetupRequest{AllocID: b, Ports: []PortMapping{{HostPort: mustFreePort(t), ContainerPort: 80}}}
	resA, err := tn.Setup(ctx, reqA)
	require.NoError(t, err)
	resB, err := tn.Setup(ctx, reqB)
	require.NoError(t, err)

	tn.simulateReboot(t, a, b)
	for _, id := range []string{a, b} {
		_, err := os.Lstat(tn.NetnsPath(id))
		require.ErrorIs(t, err, os.ErrNotExist)
	}

	// The agent comes back. B first: it gets the first free address, which
	// was A's, and restoring A afterwards must not undo B's rules.
	restarted, err := New(tn.cfg)
	require.NoError(t, err)
	newB, err := restarted.Restore(ctx, b, resB.RawResult, reqB)
	require.NoError(t, err)
	require.Equal(t, resA.IP, newB.IP, "host-local starts afresh after the reboot")
	newA, err := restarted.Restore(ctx, a, resA.RawResult, reqA)
	require.NoError(t, err)
	require.NotEqual(t, newA.IP, newB.IP)
	require.ElementsMatch(t, []string{newA.IP.String(), newB.IP.String()}, reservedAddrs(t, tn))

	for _, c := range []struct {
		res *Result
		req SetupRequest
	}{{newA, reqA}, {newB, reqB}} {
		require.True(t, netnsExists(c.res.NetnsPath))
		require.True(t, c.res.Recreated)
		require.NoError(t, checkErr(ctx, restarted, c.req, c.res.RawResult), "CHECK of %s", c.req.AllocID)
		serveIn(t, c.res.NetnsPath, 80, "after reboot "+c.req.AllocID)
		requireGreeting(t, "", fmt.Sprintf("127.0.0.1:%d", c.req.Ports[0].HostPort), "after reboot "+c.req.AllocID)
		requireGreeting(t, "", net.JoinHostPort(c.res.Gateway.String(), fmt.Sprint(c.req.Ports[0].HostPort)),
			"after reboot "+c.req.AllocID)
	}
}

func TestRestoreWaitsForItsTurnOrItsContext(t *testing.T) {
	tn := newTestNet(t)
	release, err := tn.acquire(context.Background())
	require.NoError(t, err)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	_, err = tn.Restore(ctx, newID(), nil, SetupRequest{})
	require.ErrorIs(t, err, context.Canceled)
	release()
}

// checkErr runs CNI CHECK against raw.
func checkErr(ctx context.Context, n *Network, req SetupRequest, raw []byte) error {
	req, err := req.normalize()
	if err == nil {
		_, err = n.check(ctx, req, raw)
	}
	return err
}
