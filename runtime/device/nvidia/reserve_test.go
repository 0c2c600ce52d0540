package nvidia

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/NVIDIA/go-nvml/pkg/nvml"
	"github.com/stretchr/testify/require"

	"github.com/troupe-dev/troupe/runtime/device"
	"github.com/troupe-dev/troupe/runtime/device/nvidia/nvmltest"
)

func TestReserveTwoOfEight(t *testing.T) {
	p, s, _ := mockPlugin(t)
	s.GPU(5).Minor = 9 // minor numbers need not follow NVML indices
	uuids := s.UUIDs()

	res, err := p.Reserve([]string{uuids[5], uuids[2], uuids[5]})
	require.NoError(t, err)
	require.Equal(t, map[string]string{
		"NVIDIA_VISIBLE_DEVICES": uuids[2] + "," + uuids[5],
		"CUDA_VISIBLE_DEVICES":   "2,5",
		"CUDA_DEVICE_ORDER":      "PCI_BUS_ID",
	}, res.Envs)
	require.Equal(t, map[string]string{"CUDA_VISIBLE_DEVICES": "0,1"}, res.IsolatedEnvs, "a container sees only its GPUs")
	require.Equal(t, []device.DeviceNode{
		{HostPath: "/dev/nvidia2", ContainerPath: "/dev/nvidia2", Permissions: "rwm"},
		{HostPath: "/dev/nvidia9", ContainerPath: "/dev/nvidia9", Permissions: "rwm"},
		{HostPath: "/dev/nvidiactl", ContainerPath: "/dev/nvidiactl", Permissions: "rwm"},
		{HostPath: "/dev/nvidia-uvm", ContainerPath: "/dev/nvidia-uvm", Permissions: "rwm"},
		{HostPath: "/dev/nvidia-uvm-tools", ContainerPath: "/dev/nvidia-uvm-tools", Permissions: "rwm"},
	}, res.Devices)
	if _, ok := findFile("/", libDirs, "libnvidia-ml.so.1"); !ok {
		require.Empty(t, res.Mounts, "no driver on this host")
	}
}

// TestReserveGivesTheDriverFiles: under a Root that has part of a driver
// install (Debian's layout: sonames linked to nvidia/current), Reserve
// mounts the files that exist, symlinks resolved, at the CUDA images'
// paths, and finds the device nodes under Root.
func TestReserveGivesTheDriverFiles(t *testing.T) {
	root := t.TempDir()
	lib := filepath.Join(root, "usr/lib/x86_64-linux-gnu")
	require.NoError(t, os.MkdirAll(filepath.Join(lib, "nvidia/current"), 0o755))
	require.NoError(t, os.MkdirAll(filepath.Join(root, "usr/bin"), 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(lib, "nvidia/current/libcuda.so.550.54.15"), []byte("cuda"), 0o644))
	require.NoError(t, os.Symlink("nvidia/current/libcuda.so.550.54.15", filepath.Join(lib, "libcuda.so.1")))
	require.NoError(t, os.MkdirAll(filepath.Join(root, "usr/lib64"), 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(root, "usr/lib64/libnvidia-ml.so.1"), []byte("nvml"), 0o644))
	require.NoError(t, os.Mkdir(filepath.Join(lib, "libnvidia-ptxjitcompiler.so.1"), 0o755)) // not a file
	require.NoError(t, os.Symlink("missing", filepath.Join(lib, "libnvidia-opencl.so.1")))   // dangling
	require.NoError(t, os.WriteFile(filepath.Join(root, "usr/bin/nvidia-smi"), []byte("#!/bin/sh\n"), 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(lib, "libnvidia-gpucomp.so."+nvmltest.DriverVersion), []byte("jit"), 0o644))
	require.NoError(t, os.WriteFile(filepath.Join(lib, "libnvidia-gpucomp.so.1.2.3"), []byte("old"), 0o644)) // another version

	s := newMock()
	p, _ := newPlugin(t, Config{NVML: s, Root: root})
	res, err := p.Reserve([]string{s.UUIDs()[0]})
	require.NoError(t, err)
	require.Equal(t, []device.Mount{
		{HostPath: filepath.Join(lib, "nvidia/current/libcuda.so.550.54.15"), ContainerPath: "/usr/local/nvidia/lib64/libcuda.so.1", ReadOnly: true},
		{HostPath: filepath.Join(root, "usr/lib64/libnvidia-ml.so.1"), ContainerPath: "/usr/local/nvidia/lib64/libnvidia-ml.so.1", ReadOnly: true},
		{HostPath: filepath.Join(lib, "libnvidia-gpucomp.so."+nvmltest.DriverVersion),
			ContainerPath: "/usr/local/nvidia/lib64/libnvidia-gpucomp.so." + nvmltest.DriverVersion, ReadOnly: true},
		{HostPath: filepath.Join(root, "usr/bin/nvidia-smi"), ContainerPath: "/usr/local/nvidia/bin/nvidia-smi", ReadOnly: true},
	}, res.Mounts)
	require.Equal(t, device.DeviceNode{HostPath: filepath.Join(root, "dev/nvidia0"), ContainerPath: "/dev/nvidia0", Permissions: "rwm"},
		res.Devices[0])
	require.Equal(t, filepath.Join(root, "dev/nvidiactl"), res.Devices[1].HostPath)
}

func TestReserveBadInput(t *testing.T) {
	p, s, _ := mockPlugin(t)
	_, err := p.Reserve(nil)
	require.ErrorIs(t, err, device.ErrNoInstances)

	_, err = p.Reserve([]string{s.UUIDs()[0], "GPU-nope"})
	require.ErrorIs(t, err, device.ErrUnknownInstance)
	require.ErrorContains(t, err, "GPU-nope")
}

func TestReserveQueryFailure(t *testing.T) {
	p, s, _ := mockPlugin(t)
	s.GPU(1).GetMinorNumberFunc = func() (int, nvml.Return) { return 0, nvml.ERROR_GPU_IS_LOST }
	_, err := p.Reserve([]string{s.UUIDs()[1]})
	require.ErrorIs(t, err, nvml.ERROR_GPU_IS_LOST)
	require.NotErrorIs(t, err, device.ErrUnknownInstance)
	require.ErrorContains(t, err, "GetMinorNumber")
}

func TestManagerOverNVIDIA(t *testing.T) {
	p, s, _ := mockPlugin(t)
	fake := device.NewFake(device.FakeGroup("acme", "fpga", "X", "f1"))
	m, err := device.NewManager(nil, p, fake)
	require.NoError(t, err)

	groups, err := m.Fingerprint(context.Background())
	require.NoError(t, err)
	require.Equal(t, []string{"acme/fpga/X", "nvidia/gpu/NVIDIA H100 80GB HBM3"},
		[]string{device.GroupID(groups[0]), device.GroupID(groups[1])})

	res, err := m.Reserve([]string{s.UUIDs()[7], "f1"})
	require.NoError(t, err)
	require.Equal(t, "7", res.Envs["CUDA_VISIBLE_DEVICES"])
	require.Equal(t, map[string]string{"CUDA_VISIBLE_DEVICES": "0"}, res.IsolatedEnvs)
	require.Equal(t, "f1", res.Envs[device.FakeEnv])
	require.Len(t, res.Devices, 5, "/dev/nvidia7, three control nodes, /dev/fake-f1")
}
