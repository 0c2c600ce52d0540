package e2e

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/troupe-dev/troupe/cluster/clustertest"
	"github.com/troupe-dev/troupe/messages"
	"github.com/troupe-dev/troupe/runtime/csi/hostpath"
)

// csiCluster is a cluster whose clients each run one instance of the
// hostpath CSI plugin (a system job). Every instance keeps its volumes in
// the same directory (the hosts share the file system) and serves its
// control API on its own socket, named after its node ID.
type csiCluster struct {
	*testCluster
	bin    string                // the troupe-csi-hostpath binary
	root   string                // the volumes' directory, shared by every instance
	ctlDir string                // the instances' control sockets
	byID   map[string]*agentProc // node ID -> client agent
	order  []string              // node IDs, sorted as the controller router sorts them
}

// startCSICluster builds the plugin, starts the servers (1 or 3) and the
// clients (startAgents), and waits until the cluster has formed. Its
// cleanup kills the plugin instances that outlive a killed agent and
// unmounts what the killed nodes left mounted, before the data directory
// is removed.
func startCSICluster(t *testing.T, servers, clients int) *csiCluster {
	t.Helper()
	clustertest.RequireRoot(t)
	bin := buildHostpath(t)
	dataRoot := t.TempDir()                 // removed last: after the unmounts below
	ctlDir, err := os.MkdirTemp("", "tcsi") // unix socket paths stay short
	require.NoError(t, err)
	t.Cleanup(func() { _ = os.RemoveAll(ctlDir) })
	t.Cleanup(func() {
		killRunning(t, bin)
		unmountUnder(t, dataRoot)
	})
	tc := startAgents(t, dataRoot, servers, clients) // its cleanup runs first
	cc := &csiCluster{testCluster: tc, bin: bin, root: filepath.Join(dataRoot, "vols"), ctlDir: ctlDir,
		byID: map[string]*agentProc{}}
	require.NoError(t, os.MkdirAll(cc.root, 0o755))
	ids := tc.nodeIDs(t)
	for _, a := range tc.clients {
		cc.byID[ids[a.Name]] = a
		cc.order = append(cc.order, ids[a.Name])
	}
	slices.Sort(cc.order)
	return cc
}

// buildHostpath builds cmd/troupe-csi-hostpath into a directory of its own.
func buildHostpath(t *testing.T) string {
	t.Helper()
	dir, err := os.MkdirTemp("", "troupe-csi-bin-")
	require.NoError(t, err)
	t.Cleanup(func() { _ = os.RemoveAll(dir) })
	bin := filepath.Join(dir, "troupe-csi-hostpath")
	build := exec.Command("go", "build", "-o", bin, "./cmd/troupe-csi-hostpath")
	build.Dir = repoRoot()
	out, err := build.CombinedOutput()
	require.NoError(t, err, "building troupe-csi-hostpath: %s", out)
	return bin
}

// registerPlugin registers the hostpath plugin as a system job, one
// monolith instance per client, its command given the extra flags.
func (cc *csiCluster) registerPlugin(t *testing.T, extra string) {
	t.Helper()
	cmd := fmt.Sprintf(`exec %s -endpoint \"$CSI_ENDPOINT\" -root %s -control %s/ctl-$NOMAD_ALLOC_NODE_ID.sock -node-id \"$NOMAD_ALLOC_NODE_ID\"%s -mode monolith`,
		cc.bin, cc.root, cc.ctlDir, extra)
	cc.register(t, fmt.Sprintf(`job "plugin" {
  datacenters = ["dc1"]
  type = "system"
  group "p" {
    task "hostpath" {
      driver = "exec"
      config {
        command = "/bin/sh"
        args    = ["-c", "%s"]
      }
      csi_plugin {
        id        = "hostpath"
        type      = "monolith"
        mount_dir = "/csi"
      }
      kill_timeout = "2s"
      resources {
        cpu    = 50
        memory = 64
      }
    }
  }
}`, cmd))
}

// runPlugin registers the plugin as a system job and waits until every
// client has a healthy controller and node instance of it.
func (cc *csiCluster) runPlugin(t *testing.T) {
	t.Helper()
	cc.registerPlugin(t, "")
	want := len(cc.order)
	cc.eventually(t, settleTimeout, "a healthy hostpath instance on every client", func() (bool, string) {
		p, _, err := cc.server().API.Plugins().Info("hostpath", nil)
		if err != nil {
			return false, err.Error()
		}
		for _, id := range cc.order {
			if !p.GetControllers()[id].GetHealthy() || !p.GetNodes()[id].GetHealthy() {
				return false, fmt.Sprintf("node %s: controller %v, node %v", short(id),
					p.GetControllers()[id].GetHealthy(), p.GetNodes()[id].GetHealthy())
			}
		}
		return int(p.GetControllersHealthy()) == want && int(p.GetNodesHealthy()) == want,
			fmt.Sprintf("%d controllers, %d nodes healthy", p.GetControllersHealthy(), p.GetNodesHealthy())
	})
}

// register parses and registers an HCL job through the server.
func (cc *csiCluster) register(t *testing.T, hcl string) {
	t.Helper()
	api := cc.server().API
	job, err := api.Jobs().ParseHCL(hcl, true)
	require.NoError(t, err, hcl)
	_, _, err = api.Jobs().Register(job, nil)
	require.NoError(t, err)
}

// create has the plugin create each volume (single-node-writer, file
// system) and returns their external IDs by volume ID.
func (cc *csiCluster) create(t *testing.T, ids ...string) map[string]string {
	t.Helper()
	ext := map[string]string{}
	for _, id := range ids {
		vols, _, err := cc.server().API.Volumes().Create(&messages.CSIVolume{ID: id, Name: id, PluginID: "hostpath",
			RequestedCapabilities: []*messages.CSIVolumeCapability{{AccessMode: "single-node-writer", AttachmentMode: "file-system"}}}, nil)
		require.NoError(t, err, "create %s", id)
		require.Len(t, vols, 1)
		require.NotEmpty(t, vols[0].GetExternalID(), "create %s", id)
		ext[id] = vols[0].GetExternalID()
	}
	return ext
}

// claims reads the volumes' claims through the server, by volume ID.
func (cc *csiCluster) claims(ids ...string) (map[string][]*messages.CSIVolumeClaim, error) {
	out := map[string][]*messages.CSIVolumeClaim{}
	for _, id := range ids {
		v, _, err := cc.server().API.Volumes().Info(id, nil)
		if err != nil {
			return nil, fmt.Errorf("volume %s: %w", id, err)
		}
		out[id] = v.GetClaims()
	}
	return out, nil
}

func describeClaims(claims map[string][]*messages.CSIVolumeClaim) string {
	ids := make([]string, 0, len(claims))
	for id := range claims {
		ids = append(ids, id)
	}
	slices.Sort(ids)
	var parts []string
	for _, id := range ids {
		for _, c := range claims[id] {
			parts = append(parts, fmt.Sprintf("%s:%s@%s=%s", id, short(c.GetAllocationID()), short(c.GetNodeID()), c.GetState()))
		}
	}
	return "[" + strings.Join(parts, " ") + "]"
}

// control is the control client of the instance on nodeID.
func (cc *csiCluster) control(nodeID string) *hostpath.Control {
	return hostpath.NewControl(filepath.Join(cc.ctlDir, "ctl-"+nodeID+".sock"))
}

// waitFreed waits until no volume of vols has a claim that held reports
// still held (nil: any claim).
func (cc *csiCluster) waitFreed(t *testing.T, timeout time.Duration, what string, vols []string,
	held func(vol string, c *messages.CSIVolumeClaim) bool) {
	t.Helper()
	cc.eventually(t, timeout, what, func() (bool, string) {
		claims, err := cc.claims(vols...)
		if err != nil {
			return false, err.Error()
		}
		for v, cs := range claims {
			if slices.ContainsFunc(cs, func(c *messages.CSIVolumeClaim) bool { return held == nil || held(v, c) }) {
				return false, describeClaims(claims)
			}
		}
		return true, ""
	})
}

// calls returns the call records of the instance on nodeID, of the given
// methods (every method when none).
func (cc *csiCluster) calls(t *testing.T, nodeID string, methods ...string) []hostpath.Call {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), requestTimeout)
	defer cancel()
	all, err := cc.control(nodeID).Calls(ctx)
	require.NoError(t, err, "calls of the instance on %s", short(nodeID))
	var out []hostpath.Call
	for _, c := range all {
		if len(methods) == 0 || slices.Contains(methods, c.Method) {
			out = append(out, c)
		}
	}
	return out
}

// controllerCalls are the controller RPCs that go through the leader's
// controller queue.
var controllerCalls = []string{"CreateVolume", "ControllerPublishVolume", "ControllerUnpublishVolume"}

func describeCalls(calls []hostpath.Call) string {
	parts := make([]string, 0, len(calls))
	for _, c := range calls {
		parts = append(parts, fmt.Sprintf("%s(%s@%s)=%s", c.Method, c.VolumeID, short(c.NodeID), c.Code))
	}
	return "[" + strings.Join(parts, " ") + "]"
}

// volumeJobHCL is a service job whose group mounts the CSI volume source
// at /v0 (per_alloc: source[<index>]); its task writes its allocation ID
// there.
func volumeJobHCL(id string, count int, source string, perAlloc bool) string {
	return fmt.Sprintf(`job %q {
  datacenters = ["dc1"]
  type = "service"
  group "g" {
    count = %d
    volume "v0" {
      type            = "csi"
      source          = %q
      access_mode     = "single-node-writer"
      attachment_mode = "file-system"
      per_alloc       = %t
    }
    task "t" {
      driver = "exec"
      config {
        command = "/bin/sh"
        args    = ["-c", "echo $NOMAD_ALLOC_ID > /v0/written; while true; do sleep 0.5; done"]
      }
      volume_mount {
        volume      = "v0"
        destination = "/v0"
      }
      kill_timeout = "2s"
      resources {
        cpu    = 20
        memory = 16
      }
    }
  }
}`, id, count, source, perAlloc)
}

// killRunning SIGKILLs every process whose executable path is bin (the
// plugin instances, which outlive a killed agent).
func killRunning(t *testing.T, bin string) {
	t.Helper()
	dirs, _ := filepath.Glob("/proc/[0-9]*")
	for _, d := range dirs {
		cmdline, err := os.ReadFile(filepath.Join(d, "cmdline"))
		if err != nil {
			continue
		}
		if argv0, _, _ := bytes.Cut(cmdline, []byte{0}); string(argv0) != bin {
			continue
		}
		if pid, err := strconv.Atoi(filepath.Base(d)); err == nil {
			if err := syscall.Kill(pid, syscall.SIGKILL); err != nil && err != syscall.ESRCH {
				t.Logf("kill plugin %d: %v", pid, err)
			}
		}
	}
}

// unmountUnder detaches every mount below dir, deepest first (the volume
// mounts of allocations whose agent was killed).
func unmountUnder(t *testing.T, dir string) {
	t.Helper()
	points, err := mountPoints(dir)
	if err != nil {
		t.Logf("mountinfo: %v", err)
		return
	}
	slices.SortFunc(points, func(a, b string) int { return len(b) - len(a) })
	for _, p := range points {
		if err := syscall.Unmount(p, syscall.MNT_DETACH); err != nil && err != syscall.EINVAL && err != syscall.ENOENT {
			t.Logf("unmount %s: %v", p, err)
		}
	}
}

// mountPoints lists this mount namespace's mount points below dir, from
// /proc/self/mountinfo.
func mountPoints(dir string) ([]string, error) {
	b, err := os.ReadFile("/proc/self/mountinfo")
	if err != nil {
		return nil, err
	}
	var out []string
	for _, l := range strings.Split(string(b), "\n") {
		if f := strings.Fields(l); len(f) > 4 && strings.HasPrefix(f[4], dir+"/") {
			out = append(out, f[4])
		}
	}
	return out, nil
}
