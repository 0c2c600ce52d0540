package e2e

import (
	"encoding/json"
	"fmt"
	"hash/fnv"
	"net"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"golang.org/x/sys/unix"
	"google.golang.org/grpc/codes"

	"github.com/troupe-dev/troupe/actors/alloc"
	"github.com/troupe-dev/troupe/cluster/clustertest"
	"github.com/troupe-dev/troupe/messages"
	"github.com/troupe-dev/troupe/runtime/csi/hostpath"
)

// These tests SIGKILL a real `troupe agent -server -client` (no graceful
// shutdown: the OOM killer, kill -9) while it has work in flight, start it
// again on the same data dir, and check that it picks up where it was.

// TestKill9AgentResumesCSIUnpublish: the agent dies while the node plugin
// fails every NodeUnpublishVolume of a stopped allocation's volume; the
// restarted agent, with the plugin healed, unpublishes once, and only then
// does the controller detach; the claim is freed.
func TestKill9AgentResumesCSIUnpublish(t *testing.T) {
	clustertest.RequireRoot(t)
	bin := buildHostpath(t)
	dir := t.TempDir()
	t.Cleanup(func() { unmountUnder(t, dir) }) // after the agent's cleanup killed the plugin
	ctlDir, err := os.MkdirTemp("", "k9ctl")   // a short unix socket path
	require.NoError(t, err)
	t.Cleanup(func() { _ = os.RemoveAll(ctlDir) })
	noCNI := filepath.Join(dir, "no-cni") // no CNI plugins: no bridge network, no network GC
	require.NoError(t, os.MkdirAll(noCNI, 0o755))
	a := newK9Agent(t, dir, freeAddr(t), nil, "-cni-path", noCNI)
	a.start(t)

	root, sock := filepath.Join(dir, "vols"), filepath.Join(ctlDir, "ctl.sock")
	plugin := a.register(t, k9PluginJob(bin, root, sock))
	ctl := hostpath.NewControl(sock)
	require.Eventually(t, func() bool {
		p, _, err := a.api.Plugins().Info("hostpath", nil)
		return err == nil && p.GetControllersHealthy() == 1 && p.GetNodesHealthy() == 1
	}, k9Settle, k9Poll, "the hostpath plugin never became healthy")
	pal := a.waitAlloc(t, plugin, "ran", func(al *messages.Allocation) bool { return al.GetClientStatus() == "running" })
	// A plugin socket path too long for a unix socket moves to a directory
	// in /tmp, which the agent never removes (reported): remove this one.
	sockDir := filepath.Dir(alloc.PluginSocketPath(filepath.Join(dir, "data", "alloc"), pal.GetID(), "hostpath", "/csi"))
	if !strings.HasPrefix(sockDir, dir+"/") {
		t.Cleanup(func() { _ = os.RemoveAll(sockDir) })
	}
	spec := filepath.Join(dir, "vol.hcl")
	require.NoError(t, os.WriteFile(spec, []byte(k9VolumeSpec), 0o644))
	require.Contains(t, a.troupe(t, "volume", "create", spec), "with ID k9vol")
	vol, _, err := a.api.Volumes().Info("k9vol", nil)
	require.NoError(t, err)
	ext := vol.GetExternalID()
	require.NotEmpty(t, ext)

	jobID := a.register(t, k9VolumeJob)
	al := a.waitAlloc(t, jobID, "ran", func(al *messages.Allocation) bool { return al.GetClientStatus() == "running" })
	written := filepath.Join(root, ext, "written")
	require.Eventually(t, func() bool {
		b, err := os.ReadFile(written)
		return err == nil && strings.TrimSpace(string(b)) == al.GetID()
	}, 20*time.Second, k9Poll, "the task's write never reached the volume")

	require.NoError(t, ctl.FailNext(t.Context(), "NodeUnpublishVolume", ext, codes.Internal, -1))
	_, _, err = a.api.Jobs().Deregister(jobID, false, nil)
	require.NoError(t, err)
	require.Eventually(t, func() bool { return len(k9Calls(t, ctl, ext, "NodeUnpublishVolume")) >= 2 },
		k9Settle, k9Poll, "NodeUnpublishVolume was not retried")
	a.kill9(t)
	before := k9Calls(t, ctl, ext, "NodeUnpublishVolume", "ControllerUnpublishVolume")
	for _, c := range before {
		require.Equal(t, "NodeUnpublishVolume", c.Method, "no controller detach while the node unpublish fails")
		require.Equal(t, codes.Internal.String(), c.Code)
	}
	t.Logf("before the kill: %v", k9Describe(before))
	require.NoError(t, ctl.Reset(t.Context()))
	restart := time.Now()
	a.start(t)

	require.Eventually(t, func() bool {
		v, _, err := a.api.Volumes().Info("k9vol", nil)
		return err == nil && len(v.GetClaims()) == 0
	}, k9Settle, k9Poll, "the restarted agent never freed the claim")
	var after []hostpath.Call
	for _, c := range k9Calls(t, ctl, ext, "NodeUnpublishVolume", "NodeUnstageVolume", "ControllerUnpublishVolume") {
		if c.Start.After(restart) {
			after = append(after, c)
		}
	}
	t.Logf("after the restart (%.1f s to free the claim): %v", time.Since(restart).Seconds(), k9Describe(after))
	require.Equal(t, []string{"NodeUnpublishVolume OK", "NodeUnstageVolume OK", "ControllerUnpublishVolume OK"},
		k9Describe(after), "after the restart: one node unpublish, then the controller detach")
	require.True(t, after[2].Start.After(after[0].End), "controller detach only after the node side succeeded")
	require.Len(t, k9Calls(t, ctl, ext, "ControllerUnpublishVolume"), 1)
	a.waitAlloc(t, jobID, "stopped", terminal)
	require.Empty(t, mountsUnder(t, filepath.Join(dir, "data", "alloc", al.GetID())), "the volume is unmounted")
	b, err := os.ReadFile(written)
	require.NoError(t, err, "the data outlives the allocation")
	require.Equal(t, al.GetID(), strings.TrimSpace(string(b)))

	a.stopJob(t, plugin)
	a.stop(t)
	requireNoLeftovers(t, dir)
	if _, err := os.Stat(sockDir); err == nil && !strings.HasPrefix(sockDir, dir+"/") {
		t.Logf("known leak: the plugin's socket directory %s outlives its allocation", sockDir)
	}
}

// TestKill9AgentKeepsBridgeAllocation: the agent dies while a bridge-mode
// allocation serves on its host port; the restarted agent re-attaches:
// the same task (started once), the same address and namespace, the port
// answers; stopping the job then leaves no namespace, address or rule.
// The agent runs in a host of its own (network namespace: bridge,
// iptables) and with private /run/netns and /run/cni (mount namespace).
func TestKill9AgentKeepsBridgeAllocation(t *testing.T) {
	clustertest.RequireRoot(t)
	dir := t.TempDir()
	host := clustertest.New(t, 1).Host(0)
	pin := privateRunDirs(t, dir)
	h := fnv.New32a()
	h.Write([]byte(dir))
	n := h.Sum32()
	a := newK9Agent(t, dir, host.AddrPort(httpPort),
		[]string{"nsenter", "--net=/var/run/netns/" + host.NetNS, "--mount=" + pin, "--"},
		"-bridge", fmt.Sprintf("k9br%04x", n&0xffff), "-bridge-subnet", fmt.Sprintf("10.250.%d.0/24", n%256))
	a.start(t)

	jobID := a.register(t, k9WebJob)
	al := a.waitAlloc(t, jobID, "ran with an address", func(al *messages.Allocation) bool {
		return al.GetClientStatus() == "running" && al.GetNetworkStatus().GetAddress() != ""
	})
	port := host.AddrPort(k9HostPort(t, al))
	require.Equal(t, al.GetID(), httpGet(t, port))
	addr := al.GetNetworkStatus().GetAddress()
	starts := filepath.Join(dir, "data", "alloc", al.GetID(), "web", "local", "starts")
	k9Starts(t, starts)
	pid := k9TaskPid(t, filepath.Join(dir, "data", "alloc", al.GetID(), "web")) // pid 1 in its own namespace
	require.True(t, alive(pid, "httpd"), "pid %d is the task (httpd)", pid)
	netnsFile := "/proc/%d/root/run/netns/" + al.GetID() // in the agent's mount namespace
	inode := k9NetnsInode(t, fmt.Sprintf(netnsFile, a.cmd.Process.Pid))
	require.Equal(t, inode, k9NetnsInode(t, fmt.Sprintf("/proc/%d/ns/net", pid)), "the task is in the pinned namespace")
	require.Equal(t, []string{al.GetID()}, k9Dir(t, filepath.Join(dir, "netns")))

	t.Logf("allocation %s: address %s, task pid %d, host port %s", al.GetID(), addr, pid, port)
	a.kill9(t)
	require.True(t, alive(pid, "httpd"), "the task outlives the agent")
	require.Equal(t, al.GetID(), httpGet(t, port), "and goes on serving")
	restart := time.Now()
	a.start(t)

	require.Eventually(t, func() bool { return a.hasActor("allocs/"+al.GetID(), "tasks/web") }, k9Settle, k9Poll,
		"the restarted agent never restored the allocation's task")
	got := a.waitAlloc(t, jobID, "ran again", func(al *messages.Allocation) bool {
		return al.GetClientStatus() == "running" && al.GetTaskStates()["web"].GetState() == "running"
	})
	t.Logf("restored %.1f s after the restart", time.Since(restart).Seconds())
	require.Equal(t, addr, got.GetNetworkStatus().GetAddress(), "the same address")
	require.Equal(t, al.GetID(), httpGet(t, port))
	require.Never(t, func() bool {
		body, err := getOnce(port)
		return len(k9Starts(t, starts)) != 1 || !alive(pid, "httpd") || err != nil || body != al.GetID()
	}, 3*time.Second, 200*time.Millisecond, "the task must go on, not start twice")
	require.Equal(t, []string{al.GetID()}, k9Dir(t, filepath.Join(dir, "netns")), "exactly one namespace")
	require.Equal(t, inode, k9NetnsInode(t, fmt.Sprintf(netnsFile, a.cmd.Process.Pid)), "the same namespace")
	require.Equal(t, inode, k9NetnsInode(t, fmt.Sprintf("/proc/%d/ns/net", pid)))
	require.Contains(t, run(t, "nsenter", "--net=/proc/"+strconv.Itoa(pid)+"/ns/net", "ip", "-4", "addr", "show", "eth0"),
		"inet "+addr+"/", "the address is the task's")

	a.stopJob(t, jobID)
	require.Eventually(t, func() bool {
		rules, err := host.Exec(t.Context(), "iptables-save")
		return err == nil && !strings.Contains(string(rules), al.GetID()) &&
			len(k9Dir(t, filepath.Join(dir, "netns"))) == 0 && len(k9Reservations(t, filepath.Join(dir, "cni"))) == 0
	}, k9Settle, k9Poll, "the stopped allocation left firewall rules, a namespace or an address")
	require.NotContains(t, run(t, "iptables-save"), al.GetID(), "nothing in the host's own firewall")
	a.stop(t)
	requireNoLeftovers(t, dir)
}

const k9VolumeSpec = `id        = "k9vol"
name      = "k9vol"
type      = "csi"
plugin_id = "hostpath"

capability {
  access_mode     = "single-node-writer"
  attachment_mode = "file-system"
}
`

// k9VolumeJob mounts k9vol at /v0; its task writes its allocation ID there.
var k9VolumeJob = volumeJobHCL("k9vol", 1, "k9vol", false)

// k9WebJob serves its allocation ID on 8080 in its bridge network, mapped
// to a dynamic host port; each start of the task appends its pid (the
// shell's, which execs httpd) to $NOMAD_TASK_DIR/starts.
const k9WebJob = `job "k9web" {
  group "g" {
    network {
      mode = "bridge"
      port "http" { to = 8080 }
    }
    task "web" {
      driver = "exec"
      config {
        command = "/bin/sh"
        args    = ["-c", "echo $$ >> $NOMAD_TASK_DIR/starts; mkdir -p $NOMAD_TASK_DIR/www; echo $NOMAD_ALLOC_ID > $NOMAD_TASK_DIR/www/index.html; exec /usr/bin/busybox httpd -f -p 8080 -h $NOMAD_TASK_DIR/www"]
      }
      kill_timeout = "2s"
      resources {
        cpu    = 20
        memory = 16
      }
    }
  }
}`

// k9PluginJob runs the hostpath plugin (controller and node) with its
// control socket.
func k9PluginJob(bin, root, sock string) string {
	return fmt.Sprintf(`job "plugin" {
  group "p" {
    task "hostpath" {
      driver = "exec"
      config {
        command = "/bin/sh"
        args    = ["-c", "exec %s -endpoint \"$CSI_ENDPOINT\" -root %s -control %s -node-id \"$NOMAD_ALLOC_NODE_ID\" -mode monolith"]
      }
      csi_plugin {
        id        = "hostpath"
        type      = "monolith"
        mount_dir = "/csi"
      }
      kill_timeout = "2s"
    }
  }
}`, bin, root, sock)
}

// k9Calls are the plugin's calls about volume ext of the given methods.
func k9Calls(t *testing.T, ctl *hostpath.Control, ext string, methods ...string) []hostpath.Call {
	t.Helper()
	all, err := ctl.Calls(t.Context())
	require.NoError(t, err)
	var out []hostpath.Call
	for _, c := range all {
		if c.VolumeID == ext && slices.Contains(methods, c.Method) {
			out = append(out, c)
		}
	}
	return out
}

func k9Describe(calls []hostpath.Call) []string {
	out := make([]string, 0, len(calls))
	for _, c := range calls {
		out = append(out, c.Method+" "+c.Code)
	}
	return out
}

// mountsUnder lists this mount namespace's mount points below dir.
func mountsUnder(t *testing.T, dir string) []string {
	t.Helper()
	points, err := mountPoints(dir)
	require.NoError(t, err)
	return points
}

// k9HostPort is the host port mapped to the allocation's "http" port.
func k9HostPort(t *testing.T, al *messages.Allocation) int {
	t.Helper()
	for _, n := range al.GetAllocatedResources().GetShared().GetNetworks() {
		for _, p := range append(n.GetReservedPorts(), n.GetDynamicPorts()...) {
			if p.GetLabel() == "http" {
				return int(p.GetValue())
			}
		}
	}
	t.Fatalf("allocation %s has no http port", al.GetID())
	return 0
}

// k9Starts reads the pids the task wrote at each start.
// k9TaskPid is the host pid of the task in taskDir, from its executor's
// pid.json.
func k9TaskPid(t *testing.T, taskDir string) int {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(taskDir, ".executor", "pid.json"))
	require.NoError(t, err)
	var pf struct{ Pid int }
	require.NoError(t, json.Unmarshal(b, &pf))
	require.Positive(t, pf.Pid)
	return pf.Pid
}

func k9Starts(t *testing.T, path string) []int {
	t.Helper()
	b, err := os.ReadFile(path)
	require.NoError(t, err)
	var pids []int
	for _, f := range strings.Fields(string(b)) {
		pid, err := strconv.Atoi(f)
		require.NoError(t, err)
		pids = append(pids, pid)
	}
	require.NotEmpty(t, pids)
	return pids
}

// k9NetnsInode is the inode of a network namespace file (nsfs).
func k9NetnsInode(t *testing.T, path string) uint64 {
	t.Helper()
	var fs unix.Statfs_t
	require.NoError(t, unix.Statfs(path, &fs))
	require.Equal(t, int64(unix.NSFS_MAGIC), int64(fs.Type), "%s is no network namespace", path)
	var st unix.Stat_t
	require.NoError(t, unix.Stat(path, &st))
	return st.Ino
}

func k9Dir(t *testing.T, dir string) []string {
	t.Helper()
	entries, err := os.ReadDir(dir)
	require.NoError(t, err)
	var names []string
	for _, e := range entries {
		names = append(names, e.Name())
	}
	return names
}

// k9Reservations are host-local's address files below dir.
func k9Reservations(t *testing.T, dir string) []string {
	t.Helper()
	var out []string
	_ = filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
		if err == nil && !d.IsDir() && net.ParseIP(d.Name()) != nil {
			out = append(out, p)
		}
		return nil
	})
	return out
}
