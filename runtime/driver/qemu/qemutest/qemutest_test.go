package qemutest

import (
	"bytes"
	"compress/gzip"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestNewcListsWithCpio: busybox's cpio reads what writeNewc wrote.
func TestNewcListsWithCpio(t *testing.T) {
	if _, err := os.Stat("/bin/busybox"); err != nil {
		t.Skip("busybox-static (scripts/setup.sh) lists the archive")
	}
	var buf bytes.Buffer
	require.NoError(t, writeNewc(&buf, []entry{{Name: "bin", Mode: os.ModeDir | 0o755},
		{Name: "bin/sh", Mode: os.ModeSymlink | 0o777, Data: []byte("busybox")},
		{Name: "init", Mode: 0o755, Data: []byte("#!/bin/sh\n")}, {Name: "odd", Mode: 0o644, Data: []byte("abc")}}))
	gz, err := gzip.NewReader(&buf)
	require.NoError(t, err)
	cmd := exec.Command("/bin/busybox", "cpio", "-tv")
	cmd.Stdin = gz
	out, err := cmd.Output() // the block count goes to stderr
	require.NoError(t, err, "%s", out)
	lines := strings.Split(strings.TrimSpace(string(out)), "\n")
	require.Len(t, lines, 4, "%s", out)
	require.True(t, strings.HasPrefix(lines[0], "drwxr-xr-x"), lines[0])
	require.Contains(t, lines[1], "bin/sh -> busybox")
	require.True(t, strings.HasPrefix(lines[2], "-rwxr-xr-x"), lines[2])
	require.Contains(t, lines[3], " 3 ") // the size of odd
}

func TestLoadOrderPutsDependenciesFirst(t *testing.T) {
	dir := t.TempDir()
	dep := "kernel/a/virtio_net.ko: kernel/a/net_failover.ko kernel/b/failover.ko kernel/v/virtio.ko kernel/v/virtio_ring.ko\n" +
		"kernel/a/net_failover.ko: kernel/b/failover.ko\nkernel/b/failover.ko:\nkernel/v/virtio.ko:\nkernel/v/virtio_ring.ko:\n" +
		"kernel/v/virtio_pci.ko: kernel/v/virtio.ko kernel/v/virtio_ring.ko\n"
	require.NoError(t, os.WriteFile(filepath.Join(dir, "modules.dep"), []byte(dep), 0o644))
	order, err := loadOrder(dir, []string{"virtio_pci", "virtio_net"})
	require.NoError(t, err)
	require.Equal(t, []string{"kernel/v/virtio.ko", "kernel/v/virtio_ring.ko", "kernel/v/virtio_pci.ko",
		"kernel/b/failover.ko", "kernel/a/net_failover.ko", "kernel/a/virtio_net.ko"}, order)
	_, err = loadOrder(dir, []string{"e1000"})
	require.ErrorContains(t, err, "module e1000 not in")
}
