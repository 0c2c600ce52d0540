package cni

import (
	"context"
	"errors"
	"testing"

	"github.com/stretchr/testify/require"
)

func TestFakeHandsOutAddressesAndRefusesTakenPorts(t *testing.T) {
	ctx := context.Background()
	f := NewFake()
	a, err := f.Setup(ctx, SetupRequest{AllocID: "a", Ports: []PortMapping{{HostPort: 8080}}})
	require.NoError(t, err)
	b, err := f.Setup(ctx, SetupRequest{AllocID: "b"})
	require.NoError(t, err)
	require.NotEqual(t, a.IP, b.IP)
	require.Equal(t, []PortMapping{{HostPort: 8080, ContainerPort: 8080, Protocol: "tcp"}}, a.Ports)

	_, err = f.Setup(ctx, SetupRequest{AllocID: "c", Ports: []PortMapping{{HostPort: 8080}}})
	require.ErrorIs(t, err, ErrPortInUse)
	_, err = f.Setup(ctx, SetupRequest{AllocID: "a"})
	require.ErrorIs(t, err, ErrExists)
	_, err = f.Setup(ctx, SetupRequest{})
	require.ErrorIs(t, err, ErrInvalidRequest)
	require.Equal(t, []string{"a", "b"}, f.Active())
}

func TestFakeRestoresKnownNetworksAndRecreatesLostOnes(t *testing.T) {
	ctx := context.Background()
	f := NewFake()
	a, err := f.Setup(ctx, SetupRequest{AllocID: "a"})
	require.NoError(t, err)
	got, err := f.Restore(ctx, "a", a.RawResult, SetupRequest{})
	require.NoError(t, err)
	require.Equal(t, a.IP, got.IP)
	require.False(t, got.Recreated)

	f.Reboot()
	require.Empty(t, f.Active())
	got, err = f.Restore(ctx, "a", a.RawResult, SetupRequest{})
	require.NoError(t, err)
	require.NotEqual(t, a.IP, got.IP, "a fresh address after a reboot")
	require.True(t, got.Recreated)
	require.Equal(t, []string{"a"}, f.Active())
}

func TestFakeCountsOrdersAndFailsCalls(t *testing.T) {
	ctx := context.Background()
	f := NewFake()
	boom := errors.New("boom")
	f.FailNext(MethodTeardown, boom, 1)
	f.FailNext(MethodGC, boom, 1)
	_, err := f.Setup(ctx, SetupRequest{AllocID: "a"})
	require.NoError(t, err)
	_, err = f.Setup(ctx, SetupRequest{AllocID: "b"})
	require.NoError(t, err)
	require.ErrorIs(t, f.Teardown(ctx, "a", nil, SetupRequest{}), boom)
	require.Equal(t, []string{"a", "b"}, f.Active(), "a failed teardown keeps the network")
	require.NoError(t, f.Teardown(ctx, "a", nil, SetupRequest{}))
	require.ErrorIs(t, f.GC(ctx, func(string) bool { return false }), boom)
	require.Equal(t, []string{"b"}, f.Active())
	require.NoError(t, f.GC(ctx, func(id string) bool { return id == "x" }))
	require.Empty(t, f.Active())

	require.Equal(t, 2, f.Calls(MethodSetup))
	require.Equal(t, 2, f.Calls(MethodTeardown))
	require.Equal(t, 2, f.Calls(MethodGC))
	require.Zero(t, f.Calls(MethodRestore))
	require.Equal(t, []string{"Setup a", "Setup b", "Teardown a", "Teardown a", "GC", "GC"}, f.Order())
}
