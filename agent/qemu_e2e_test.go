package agent

import (
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	nomad "github.com/hashicorp/nomad/api"
	"github.com/stretchr/testify/require"

	"github.com/troupe-dev/troupe/runtime/driver/qemu/qemutest"
)

// qemuBoot bounds a TCG boot of the test kernel (~5-20 s on 2 busy cores).
const qemuBoot = 3 * time.Minute

// TestQemuJobEndToEnd runs a qemu job through a real agent: the node
// advertises the driver, the VM (TCG) boots Debian's kernel with a busybox
// initramfs, its marker reaches the task's log through /v1/client/fs/logs,
// the forwarded host port serves the guest's page, the VM outlives an
// agent restart and is re-attached, and stopping the job powers it down
// through the monitor (system_powerdown; the guest's acpid runs poweroff)
// well before kill_timeout, leaving no qemu process.
func TestQemuJobEndToEnd(t *testing.T) {
	requireRoot(t)
	k, err := qemutest.FindKernel()
	require.NoError(t, err)
	images := t.TempDir()
	initrd := filepath.Join(images, "initrd.gz")
	require.NoError(t, qemutest.BuildInitramfs(initrd, k, 8080, "troupe-qemu-page\n"))
	disk := filepath.Join(images, "disk.img")
	require.NoError(t, os.WriteFile(disk, make([]byte, 1<<20), 0o644))

	dir := t.TempDir()
	cfg := testConfig(t, dir)
	cfg.QemuImagePaths = []string{images}
	a := startAgent(t, cfg)
	defer func() { _ = a.Shutdown() }()
	c, err := nomad.NewClient(&nomad.Config{Address: "http://" + a.HTTPAddr()})
	require.NoError(t, err)
	node, _, err := c.Nodes().Info(a.Node().GetID(), nil)
	require.NoError(t, err)
	require.Equal(t, "1", node.Attributes["driver.qemu"], "qemu-system-x86_64 missing? run scripts/setup.sh")
	require.Regexp(t, `^\d+\.\d+\.\d+$`, node.Attributes["driver.qemu.version"])
	require.Contains(t, []string{"true", "false"}, node.Attributes["driver.qemu.kvm"])

	_, _, err = c.Jobs().Register(qemuJob(disk, k.Path, initrd), nil)
	require.NoError(t, err)
	alloc := waitAllocStatus(t, c, "vm", "running")
	waitForLog(t, a, alloc.ID, qemutest.Marker)
	full, _, err := c.Allocations().Info(alloc.ID, nil)
	require.NoError(t, err)
	port := 0
	for _, n := range full.AllocatedResources.Shared.Networks {
		for _, p := range n.DynamicPorts {
			if p.Label == "http" {
				port = p.Value
			}
		}
	}
	require.NotZero(t, port, "the allocation has its http port")
	require.Equal(t, "troupe-qemu-page", get(t, port), "the host port reaches the guest's httpd")
	pid := qemuPid(t, alloc.ID)
	require.NotZero(t, pid, "a qemu process runs for the allocation")
	group := taskCgroupDir(a, "memory", alloc.ID, "vm")
	require.Eventually(t, func() bool { return groupProcess(group, qemuCmdline(pid)) == pid },
		10*time.Second, 50*time.Millisecond, "qemu runs in the task's cgroup")
	require.Eventually(t, func() bool {
		u, err := c.Allocations().Stats(&nomad.Allocation{ID: alloc.ID}, nil)
		return err == nil && u.Tasks["vm"] != nil && u.Tasks["vm"].ResourceUsage.MemoryStats.RSS > 0
	}, 20*time.Second, 50*time.Millisecond, "the VM's usage from its cgroup")

	crash(t, a)
	require.True(t, alive(pid), "the VM outlives the agent")
	cfg = testConfig(t, dir)
	cfg.QemuImagePaths = []string{images}
	b := startAgent(t, cfg)
	defer func() { _ = b.Shutdown() }()
	c, err = nomad.NewClient(&nomad.Config{Address: "http://" + b.HTTPAddr()})
	require.NoError(t, err)
	require.Equal(t, "troupe-qemu-page", get(t, port), "the VM still serves after the restart")
	require.Equal(t, pid, qemuPid(t, alloc.ID), "re-attached, not started again")

	start := time.Now()
	_, _, err = c.Jobs().Deregister("vm", false, nil)
	require.NoError(t, err)
	require.Eventually(t, func() bool { return !alive(pid) }, 60*time.Second, 50*time.Millisecond, "qemu still runs")
	require.Less(t, time.Since(start), 50*time.Second, "powered down, not killed after kill_timeout (60s)")
	waitAllocStatus(t, c, "vm", "complete")
	stdout, err := b.TaskLogPath(alloc.ID, "vm", "stdout")
	require.NoError(t, err)
	out := readLog(stdout)
	require.Contains(t, string(out), qemutest.PowerdownMarker, "the guest saw the ACPI power button")
	require.Contains(t, string(out), "reboot: Power down", "the guest kernel powered off")
	require.Zero(t, qemuPid(t, alloc.ID), "no qemu process left")
	require.Eventually(t, func() bool { return !dirExists(group) }, 10*time.Second, 10*time.Millisecond,
		"the VM's cgroup is removed at teardown")
}

// qemuCmdline is pid's /proc cmdline (as groupProcess matches it).
func qemuCmdline(pid int) string {
	b, _ := os.ReadFile(fmt.Sprintf("/proc/%d/cmdline", pid))
	return string(b)
}

func qemuJob(disk, kernel, initrd string) *nomad.Job {
	job := nomad.NewServiceJob("vm", "vm", "global", 50)
	tg := nomad.NewTaskGroup("g", 1)
	tg.Networks = []*nomad.NetworkResource{{DynamicPorts: []nomad.Port{{Label: "http"}}}}
	task := nomad.NewTask("vm", "qemu").
		SetConfig("image_path", disk).
		SetConfig("drive_interface", "virtio").
		SetConfig("accelerator", "tcg").
		SetConfig("graceful_shutdown", true).
		SetConfig("port_map", map[string]int{"http": 8080}).
		SetConfig("args", []string{"-kernel", kernel, "-initrd", initrd,
			"-append", "console=ttyS0 quiet panic=-1", "-no-reboot"}).
		Require(&nomad.Resources{CPU: ptr(500), MemoryMB: ptr(256)})
	task.KillTimeout = ptr(60 * time.Second)
	tg.AddTask(task)
	job.AddTaskGroup(tg)
	return job
}

// waitForLog polls the task's stdout through /v1/client/fs/logs until it
// holds marker.
func waitForLog(t *testing.T, a *Agent, allocID, marker string) {
	t.Helper()
	url := fmt.Sprintf("http://%s/v1/client/fs/logs/%s?task=vm&type=stdout&plain=true&follow=false", a.HTTPAddr(), allocID)
	var last string
	require.Eventually(t, func() bool {
		resp, err := http.Get(url)
		if err != nil {
			return false
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		last = string(b)
		return resp.StatusCode == http.StatusOK && strings.Contains(last, marker)
	}, qemuBoot, 100*time.Millisecond, "no %q in the task's log", marker)
}

// qemuPid finds the qemu process whose command line names the allocation
// (its task dir), 0 when there is none.
func qemuPid(t *testing.T, allocID string) int {
	t.Helper()
	entries, err := os.ReadDir("/proc")
	require.NoError(t, err)
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		cmd, _ := os.ReadFile(filepath.Join("/proc", e.Name(), "cmdline"))
		args := strings.Split(string(cmd), "\x00")
		if strings.HasSuffix(args[0], "qemu-system-x86_64") && strings.Contains(string(cmd), allocID) {
			stat, _ := os.ReadFile(filepath.Join("/proc", e.Name(), "stat"))
			if i := strings.LastIndexByte(string(stat), ')'); i > 0 && len(stat) > i+2 && stat[i+2] == 'Z' {
				continue // a zombie is gone
			}
			return pid
		}
	}
	return 0
}
