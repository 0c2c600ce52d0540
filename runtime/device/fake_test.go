package device

import (
	"context"
	"errors"
	"testing"

	"github.com/stretchr/testify/require"
)

func TestFakeFingerprintReturnsClones(t *testing.T) {
	f := NewFake(FakeGroup("nvidia", "gpu", "T4", "g1"))
	groups, err := f.Fingerprint(context.Background())
	require.NoError(t, err)
	groups[0].Instances[0].Healthy = false

	again, err := f.Fingerprint(context.Background())
	require.NoError(t, err)
	require.True(t, again[0].Instances[0].Healthy, "callers cannot change the Fake's state")
	require.Equal(t, 2, f.Calls(MethodFingerprint))
}

func TestFakeInjectedErrorsFireOnce(t *testing.T) {
	f := NewFake(FakeGroup("nvidia", "gpu", "T4", "g1"))
	boom := errors.New("boom")
	f.NextFingerprintErr, f.NextReserveErr, f.NextStatsErr = boom, boom, boom

	_, err := f.Fingerprint(context.Background())
	require.ErrorIs(t, err, boom)
	_, err = f.Reserve([]string{"g1"})
	require.ErrorIs(t, err, boom)
	_, err = f.Stats(context.Background())
	require.ErrorIs(t, err, boom)

	_, err = f.Fingerprint(context.Background())
	require.NoError(t, err)
	res, err := f.Reserve([]string{"g1"})
	require.NoError(t, err)
	require.Equal(t, map[string]string{FakeEnv: "g1"}, res.Envs)
	require.Equal(t, []DeviceNode{{HostPath: "/dev/fake-g1", ContainerPath: "/dev/fake-g1", Permissions: "rwm"}}, res.Devices)
	require.Equal(t, [][]string{{"g1"}}, f.Reserved())
}

func TestFakeReserveUnknown(t *testing.T) {
	f := NewFake(FakeGroup("nvidia", "gpu", "T4", "g1"))
	_, err := f.Reserve([]string{"g1", "g9"})
	require.ErrorIs(t, err, ErrUnknownInstance)
	require.ErrorContains(t, err, "g9")
	require.Empty(t, f.Reserved())
	_, err = f.Reserve([]string{""})
	require.ErrorIs(t, err, ErrNoInstances)
}

func TestFakeSetHealthUnknown(t *testing.T) {
	f := NewFake(FakeGroup("nvidia", "gpu", "T4", "g1"))
	require.False(t, f.SetHealth("nope", false, "x"))
	require.True(t, f.SetHealth("g1", false, "hot"))
	groups, err := f.Fingerprint(context.Background())
	require.NoError(t, err)
	require.False(t, groups[0].Instances[0].Healthy)
	require.Equal(t, "hot", groups[0].Instances[0].HealthDescription)
}

func TestGroupIDAndDedupe(t *testing.T) {
	require.Equal(t, "nvidia/gpu/NVIDIA H100 80GB HBM3", GroupID(FakeGroup("nvidia", "gpu", "NVIDIA H100 80GB HBM3")))
	require.Equal(t, []string{"b", "a"}, Dedupe([]string{"b", "", "a", "b"}))
}
