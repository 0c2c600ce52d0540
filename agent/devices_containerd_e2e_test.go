//go:build linux

package agent

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
	"golang.org/x/sys/unix"

	"github.com/troupe-dev/troupe/runtime/device"
	"github.com/troupe-dev/troupe/runtime/device/nvidia"
	"github.com/troupe-dev/troupe/runtime/device/nvidia/nvmltest"
	"github.com/troupe-dev/troupe/runtime/driver/containerd"
	"github.com/troupe-dev/troupe/runtime/driver/containerd/ctrdtest"
)

// fakeDriverRoot makes a host root for the NVIDIA plugin: a character
// device node for each GPU minor and the control nodes (copies of
// /dev/null's numbers), a driver library and an nvidia-smi stand-in.
func fakeDriverRoot(t *testing.T, minors []int) string {
	t.Helper()
	root := t.TempDir()
	names := append([]string{}, "nvidiactl", "nvidia-uvm", "nvidia-uvm-tools")
	for _, m := range minors {
		names = append(names, fmt.Sprintf("nvidia%d", m))
	}
	require.NoError(t, os.Mkdir(filepath.Join(root, "dev"), 0o755))
	for _, n := range names {
		require.NoError(t, unix.Mknod(filepath.Join(root, "dev", n), unix.S_IFCHR|0o666, int(unix.Mkdev(1, 3))))
	}
	lib := filepath.Join(root, "usr/lib/x86_64-linux-gnu")
	require.NoError(t, os.MkdirAll(lib, 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(lib, "libcuda.so.1"), []byte("fake-libcuda\n"), 0o644))
	require.NoError(t, os.MkdirAll(filepath.Join(root, "usr/bin"), 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(root, "usr/bin/nvidia-smi"), []byte("echo fake-nvidia-smi\n"), 0o755))
	return root
}

// TestContainerdTaskSeesOnlyItsGPUs runs a container asking for 2 of the
// DGX H100 mock's 8 GPUs through a real containerd: inside, /dev has
// exactly its two GPUs' nodes and the control nodes, the driver's files
// are at the CUDA images' paths, and CUDA numbers its GPUs from 0.
func TestContainerdTaskSeesOnlyItsGPUs(t *testing.T) {
	requireRoot(t)
	dm := ctrdtest.StartDaemon(t)
	archive, _ := ctrdtest.BusyboxArchive(t, t.TempDir())
	mock := nvmltest.NewDGXH100()
	var minors []int
	for i := range mock.UUIDs() {
		minors = append(minors, mock.GPU(i).Minor)
	}
	root := fakeDriverRoot(t, minors)
	cfg := testConfig(t, t.TempDir())
	cfg.ContainerdAddress, cfg.ContainerdNamespace = dm.Address(), dm.Namespace()
	cfg.DevicePlugins = []device.Plugin{nvidia.New(nvidia.Config{NVML: mock, Root: root, Logger: testLogger(t)})}
	e := startNetAgentWith(t, cfg)

	jobID := e.run(t, fmt.Sprintf(`job "cuda" {
  type = "batch"
  group "g" {
    task "t" {
      driver = "containerd"
      config {
        image   = %q
        command = "/bin/busybox"
        args    = ["sh", "-c", "ls /dev | grep nvidia | sort | xargs; sh /usr/local/nvidia/bin/nvidia-smi; cat /usr/local/nvidia/lib64/libcuda.so.1; echo \"$NVIDIA_VISIBLE_DEVICES $CUDA_VISIBLE_DEVICES\""]
      }
      resources {
        cpu    = 20
        memory = 32
        device "nvidia/gpu" {
          count = 2
        }
      }
    }
  }
}`, containerd.ArchiveScheme+archive))
	al := e.waitEnded(t, jobID, "complete", "failed")
	require.Equal(t, "complete", al.GetClientStatus(), "%v", al.GetTaskStates())
	ids := al.GetAllocatedResources().GetTasks()["t"].GetDevices()[0].GetDeviceIDs()
	require.Len(t, ids, 2)

	stdout, err := e.a.TaskLogPath(al.GetID(), "t", "stdout")
	require.NoError(t, err)
	lines := strings.Split(strings.TrimSpace(readLog(stdout)), "\n")
	require.Len(t, lines, 4, "the container wrote: %q", lines)
	want := []string{"nvidia-uvm", "nvidia-uvm-tools", "nvidiactl"}
	var uuids []string
	for i, uuid := range mock.UUIDs() {
		if slices.Contains(ids, uuid) {
			want = append(want, fmt.Sprintf("nvidia%d", mock.GPU(i).Minor))
			uuids = append(uuids, uuid) // NVML index order
		}
	}
	slices.Sort(want)
	require.Equal(t, strings.Join(want, " "), lines[0], "only its own GPUs' nodes, no other GPU")
	require.Equal(t, "fake-nvidia-smi", lines[1])
	require.Equal(t, "fake-libcuda", lines[2])
	require.Equal(t, strings.Join(uuids, ",")+" 0,1", lines[3])
}
