package nvidia

import (
	"context"
	"errors"
	"os"
	"testing"

	"github.com/NVIDIA/go-nvml/pkg/nvml"
	"github.com/stretchr/testify/require"

	"github.com/troupe-dev/troupe/runtime/device"
)

// checkUnavailable asserts that p reports nothing, fails nothing, and
// logged its reason exactly once.
func checkUnavailable(t *testing.T, p *Plugin, logs *logBuffer, reason string) {
	t.Helper()
	for range 3 {
		groups, err := p.Fingerprint(context.Background())
		require.NoError(t, err)
		require.Empty(t, groups)
	}
	ok, why := p.Available()
	require.False(t, ok)
	require.Contains(t, why, reason)

	stats, err := p.Stats(context.Background())
	require.NoError(t, err)
	require.Empty(t, stats)
	_, err = p.Reserve([]string{"GPU-x"})
	require.ErrorIs(t, err, device.ErrUnavailable)
	require.ErrorContains(t, err, reason)
	err = p.Watch(context.Background(), func() {})
	require.ErrorIs(t, err, device.ErrWatchUnsupported)

	require.Equal(t, 1, logs.count("NVML unavailable"), "one log line, not one per call")
	require.Equal(t, 1, logs.count(reason))
}

func TestNoLibrary(t *testing.T) {
	lib := nvml.New(nvml.WithLibraryPath("/nonexistent/libnvidia-ml.so.1"))
	p, logs := newPlugin(t, Config{NVML: lib})
	checkUnavailable(t, p, logs, "libnvidia-ml.so.1 not found")
}

// TestHostNVML uses this host's NVML through nvml.New(), the production
// path. Without the library it must report nothing; with it, the GPUs.
// TROUPE_EXPECT_NVIDIA=1 (on a GPU host) makes a missing library a failure.
func TestHostNVML(t *testing.T) {
	p, logs := newPlugin(t, Config{})
	ok, reason := p.Available()
	if os.Getenv("TROUPE_EXPECT_NVIDIA") == "1" {
		require.True(t, ok, "NVML unavailable: %s", reason)
	}
	if !ok {
		checkUnavailable(t, p, logs, reason)
		return
	}
	groups, err := p.Fingerprint(context.Background())
	require.NoError(t, err)
	require.NotEmpty(t, groups)
	var ids []string
	for _, g := range groups {
		t.Logf("%s: %v", device.GroupID(g), g.Attributes)
		require.Equal(t, Vendor, g.Vendor)
		require.NotEmpty(t, g.Attributes[AttrMemoryMiB])
		require.NotEmpty(t, g.Attributes[AttrCudaCompute])
		require.NotEmpty(t, g.Attributes[AttrDriverVersion])
		for _, inst := range g.Instances {
			t.Logf("  %s healthy=%v %q %v", inst.ID, inst.Healthy, inst.HealthDescription, inst.Locality)
			require.True(t, inst.Healthy, inst.HealthDescription)
			require.NotEmpty(t, inst.Locality[LocalityPCIBusID])
			ids = append(ids, inst.ID)
		}
	}
	res, err := p.Reserve(ids[:1])
	require.NoError(t, err)
	t.Logf("reservation: %v %v", res.Envs, res.Devices)
	require.Equal(t, ids[0], res.Envs[EnvVisibleDevices])
	for _, d := range res.Devices[:1] {
		_, err := os.Stat(d.HostPath)
		require.NoError(t, err, "the GPU's device node exists")
	}
	stats, err := p.Stats(context.Background())
	require.NoError(t, err)
	require.Contains(t, stats, ids[0])
	t.Logf("stats: %v", stats[ids[0]].Values)

	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	err = p.Watch(ctx, func() {})
	if err != nil && !errors.Is(err, device.ErrWatchUnsupported) {
		t.Fatalf("watch: %v", err)
	}
	t.Logf("watch: %v", err)
}

func TestClose(t *testing.T) {
	p, s, _ := mockPlugin(t)
	require.Len(t, fingerprint(t, p), 1)
	require.NoError(t, p.Close())
	require.Len(t, s.ShutdownCalls(), 1)
	require.Empty(t, fingerprint(t, p), "no devices after Close")
	ok, reason := p.Available()
	require.False(t, ok)
	require.Equal(t, "closed", reason)
	require.NoError(t, p.Close())
	require.Len(t, s.ShutdownCalls(), 1, "Close is idempotent")
}
