package agent

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"
)

func writeStat(t *testing.T, path, body string) {
	t.Helper()
	require.NoError(t, os.WriteFile(path, []byte(body), 0o644))
}

// TestCPUSamplerComputesUseBetweenReadings feeds two /proc/stat readings:
// the first gives the use since boot, the second the use between them.
func TestCPUSamplerComputesUseBetweenReadings(t *testing.T) {
	f := filepath.Join(t.TempDir(), "stat")
	writeStat(t, f, "cpu  200 0 100 700 0 0 0 0 0 0\n"+
		"cpu0 100 0 50 350 0 0 0 0 0 0\n"+
		"cpu1 100 0 50 350 0 0 0 0 0 0\n"+
		"intr 1 2 3\nctxt 5\n")
	s := newCPUSampler(f)
	cores := s.stats() // nothing sampled yet: one reading, since boot
	require.Len(t, cores, 2)
	require.Equal(t, "cpu0", cores[0].CPU)
	require.InDelta(t, 20, cores[0].User, 1e-9)
	require.InDelta(t, 10, cores[0].System, 1e-9)
	require.InDelta(t, 70, cores[0].Idle, 1e-9)
	require.InDelta(t, 30, cores[0].Total, 1e-9)

	// cpu0: +60 user, +10 nice, +20 irq, +10 idle of 100 ticks; cpu1 idle
	// with iowait counted as idle.
	writeStat(t, f, "cpu  270 10 120 760 50 20 0 0 0 0\n"+
		"cpu0 160 10 50 360 0 20 0 0 0 0\n"+
		"cpu1 100 0 50 400 50 0 0 0 0 0\n")
	require.NoError(t, s.sample())
	cores = s.stats()
	require.InDelta(t, 70, cores[0].User, 1e-9)
	require.InDelta(t, 20, cores[0].System, 1e-9)
	require.InDelta(t, 10, cores[0].Idle, 1e-9)
	require.InDelta(t, 90, cores[0].Total, 1e-9)
	require.InDelta(t, 100, cores[1].Idle, 1e-9)
	require.InDelta(t, 0, cores[1].Total, 1e-9)
	require.InDelta(t, 0.9*2000, ticksConsumed(cores, 2000), 1e-6)

	cores[0].User = -1 // a copy: the sampler's figures are unchanged
	require.InDelta(t, 70, s.stats()[0].User, 1e-9)
}

func TestCPUSamplerMissingFile(t *testing.T) {
	s := newCPUSampler(filepath.Join(t.TempDir(), "none"))
	require.Error(t, s.sample())
	require.Nil(t, s.stats())
}

// TestHostDisksFromAMountsFile reads block devices once each and finds
// the file system that holds a directory by its longest mount point.
func TestHostDisksFromAMountsFile(t *testing.T) {
	dir := t.TempDir()
	alloc := filepath.Join(dir, "data dir", "alloc")
	require.NoError(t, os.MkdirAll(alloc, 0o755))
	mounts := filepath.Join(dir, "mounts")
	writeStat(t, mounts, "/dev/vda / ext4 rw 0 0\n"+
		"proc /proc proc rw 0 0\n"+
		"/dev/vda /again ext4 rw 0 0\n"+
		"tmpfs "+escapeSpaces(filepath.Join(dir, "data dir"))+" tmpfs rw 0 0\n")
	disks, allocDisk := hostDisks(mounts, alloc)
	require.Len(t, disks, 1, "one entry per block device; proc and tmpfs are not disks")
	require.Equal(t, "/dev/vda", disks[0].Device)
	require.Equal(t, "/", disks[0].Mountpoint)
	require.NotZero(t, disks[0].Size)
	require.LessOrEqual(t, disks[0].Used, disks[0].Size)
	require.NotNil(t, allocDisk)
	require.Equal(t, "tmpfs", allocDisk.Device)
	require.Equal(t, filepath.Join(dir, "data dir"), allocDisk.Mountpoint, "the escaped space is read back")
}

func escapeSpaces(s string) string {
	out := ""
	for _, r := range s {
		if r == ' ' {
			out += `\040`
			continue
		}
		out += string(r)
	}
	return out
}

func TestUnescapeMount(t *testing.T) {
	require.Equal(t, "/a b", unescapeMount(`/a\040b`))
	require.Equal(t, `/a\9`, unescapeMount(`/a\9`))
	require.Equal(t, `/a\04`, unescapeMount(`/a\04`))
	require.Equal(t, "/plain", unescapeMount("/plain"))
}
