package agent

import (
	"context"
	"os"
	"path/filepath"
	"runtime"
	"testing"

	nomad "github.com/hashicorp/nomad/api"
	"github.com/stretchr/testify/require"

	"github.com/troupe-dev/troupe/httpapi"
	"github.com/troupe-dev/troupe/runtime/device"
	"github.com/troupe-dev/troupe/runtime/device/nvidia"
	"github.com/troupe-dev/troupe/runtime/device/nvidia/nvmltest"
)

// TestClientStatsThroughNomadsClient reads a client's host and GPU usage
// with Nomad's own Go client: the host's memory and uptime, and every
// mock GPU's samples with its memory used of total as the summary.
func TestClientStatsThroughNomadsClient(t *testing.T) {
	mock := nvmltest.NewDGXH100()
	cfg := testConfig(t, t.TempDir())
	cfg.DevicePlugins = []device.Plugin{nvidia.New(nvidia.Config{NVML: mock, Logger: testLogger(t)})}
	a := startAgent(t, cfg)
	defer a.Shutdown()
	c, err := nomad.NewClient(&nomad.Config{Address: "http://" + a.HTTPAddr()})
	require.NoError(t, err)

	hs, err := c.Nodes().Stats(a.Node().GetID(), nil)
	require.NoError(t, err)
	require.NotZero(t, hs.Memory.Total)
	require.LessOrEqual(t, hs.Memory.Used, hs.Memory.Total)
	require.NotZero(t, hs.Uptime)
	// The host's cores (Nomad's client decodes them) and the allocation
	// directory's file system.
	require.Len(t, hs.CPU, runtime.NumCPU())
	for _, c := range hs.CPU {
		require.LessOrEqual(t, c.User+c.System, 100-c.Idle+0.01, c.CPU) // steal is the rest
		require.Positive(t, c.User+c.System+c.Idle, c.CPU)
		require.GreaterOrEqual(t, c.Idle, 0.0)
	}
	require.GreaterOrEqual(t, hs.CPUTicksConsumed, 0.0)
	require.NotNil(t, hs.AllocDirStats)
	require.NotZero(t, hs.AllocDirStats.Size)
	require.Positive(t, hs.AllocDirStats.Used)
	require.Len(t, hs.DeviceStats, 1)
	g := hs.DeviceStats[0]
	require.Equal(t, "nvidia", g.Vendor)
	require.Len(t, g.InstanceStats, 8)
	for _, uuid := range mock.UUIDs() {
		ds := g.InstanceStats[uuid]
		require.NotNil(t, ds, uuid)
		require.Equal(t, "MiB", ds.Summary.Unit)
		require.NotNil(t, ds.Summary.FloatDenominatorVal)
		require.Greater(t, *ds.Summary.FloatDenominatorVal, 80000.0, "an H100's 80 GB")
		require.Contains(t, ds.Stats.Attributes, nvidia.StatMemoryUsedMiB)
		require.Equal(t, "MiB", ds.Stats.Attributes[nvidia.StatMemoryUsedMiB].Unit)
	}

	_, err = c.Nodes().Stats("no-such-node", nil)
	require.ErrorContains(t, err, "404")
	require.ErrorContains(t, err, "no-such-node")
}

func TestClientStatsOnAServerOnlyAgent(t *testing.T) {
	cfg := testConfig(t, t.TempDir())
	cfg.Client = false
	a, err := New(cfg)
	require.NoError(t, err)
	require.NoError(t, a.Start())
	defer a.Shutdown()
	_, _, err = a.ClientStats(context.Background(), "")
	require.ErrorIs(t, err, httpapi.ErrNoClient)
	_, _, err = a.ClientStats(context.Background(), "no-such-node")
	require.ErrorIs(t, err, httpapi.ErrUnknownNode)
}

func TestMemoryStatsAndUptime(t *testing.T) {
	dir := t.TempDir()
	meminfo := filepath.Join(dir, "meminfo")
	require.NoError(t, os.WriteFile(meminfo, []byte("MemTotal:        8000 kB\nMemFree:         1000 kB\nMemAvailable:    3000 kB\nBuffers: 10 kB\n"), 0o644))
	m, err := memoryStats(meminfo)
	require.NoError(t, err)
	require.EqualValues(t, 8000*1024, m.Total)
	require.EqualValues(t, 1000*1024, m.Free)
	require.EqualValues(t, 3000*1024, m.Available)
	require.EqualValues(t, 5000*1024, m.Used)
	require.NoError(t, os.WriteFile(meminfo, []byte("MemTotal: 8000 kB\nMemFree: 1000 kB\nBuffers: 500 kB\nCached: 1500 kB\n"), 0o644))
	m, err = memoryStats(meminfo)
	require.NoError(t, err)
	require.EqualValues(t, 3000*1024, m.Available, "no MemAvailable: free + buffers + cached")
	require.EqualValues(t, 5000*1024, m.Used)
	up := filepath.Join(dir, "uptime")
	require.NoError(t, os.WriteFile(up, []byte("12345.67 40000.00\n"), 0o644))
	secs, err := uptime(up)
	require.NoError(t, err)
	require.EqualValues(t, 12345, secs)
	_, err = uptime(meminfo)
	require.Error(t, err)
}
