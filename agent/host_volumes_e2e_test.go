//go:build linux

package agent

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	nomad "github.com/hashicorp/nomad/api"
	"github.com/stretchr/testify/require"

	"github.com/troupe-dev/troupe/actors/scheduler"
	"github.com/troupe-dev/troupe/runtime/driver/containerd"
	"github.com/troupe-dev/troupe/runtime/driver/containerd/ctrdtest"
)

// hostVolumeAgent starts an agent (raw_exec on) offering host volume "rw"
// (writable) and "ro" (read-only), both directories anyone may write, so
// that only the mount's mode stops a write. "rw" holds in.txt, "ro"
// holds seed.txt.
func hostVolumeAgent(t *testing.T) (a *Agent, c *nomad.Client, rw, ro string) {
	rw, ro = t.TempDir(), t.TempDir()
	for dir, file := range map[string]string{rw: "in.txt", ro: "seed.txt"} {
		require.NoError(t, os.Chmod(dir, 0o777))
		require.NoError(t, os.WriteFile(filepath.Join(dir, file), []byte("placed before "+file+"\n"), 0o644))
	}
	cfg := testConfig(t, t.TempDir())
	cfg.RawExecEnabled = true
	require.NoError(t, cfg.AddHostVolume("rw="+rw))
	require.NoError(t, cfg.AddHostVolume("ro="+ro+":ro"))
	a = startAgent(t, cfg)
	c, err := nomad.NewClient(&nomad.Config{Address: "http://" + a.HTTPAddr()})
	require.NoError(t, err)
	return a, c, rw, ro
}

// hostVolumeJob is a batch job whose task (driver drv) runs script with
// the group's host volumes vols mounted as mounts says.
func hostVolumeJob(id, drv, script string, vols map[string]*nomad.VolumeRequest, mounts []*nomad.VolumeMount) *nomad.Job {
	job := nomad.NewBatchJob(id, id, "global", 50)
	tg := nomad.NewTaskGroup("g", 1)
	tg.Volumes = vols
	tg.ReschedulePolicy = &nomad.ReschedulePolicy{Attempts: ptr(0), Unlimited: ptr(false)}
	tg.RestartPolicy = &nomad.RestartPolicy{Attempts: ptr(0), Mode: ptr("fail")}
	task := nomad.NewTask("t", drv).SetConfig("command", "/bin/sh").SetConfig("args", []string{"-c", script}).
		Require(&nomad.Resources{CPU: ptr(100), MemoryMB: ptr(32)})
	task.VolumeMounts = mounts
	task.KillTimeout = ptr(2 * time.Second)
	tg.AddTask(task)
	job.AddTaskGroup(tg)
	return job
}

func hostVol(source string, readOnly bool) *nomad.VolumeRequest {
	return &nomad.VolumeRequest{Type: "host", Source: source, ReadOnly: readOnly}
}

func volMount(volume, dst string, readOnly bool) *nomad.VolumeMount {
	return &nomad.VolumeMount{Volume: ptr(volume), Destination: ptr(dst), ReadOnly: ptr(readOnly)}
}

// TestHostVolumesExecEndToEnd: the node shows its host volumes in
// Nomad's shape; an isolated exec task reads a file placed in a host
// volume beforehand and writes one that lands in the host directory;
// writes through a read-only volume and through a read-only mount of a
// writable one fail.
func TestHostVolumesExecEndToEnd(t *testing.T) {
	requireRoot(t)
	a, c, rw, ro := hostVolumeAgent(t)
	defer a.Shutdown()
	node, _, err := c.Nodes().Info(a.Node().GetID(), nil)
	require.NoError(t, err)
	require.Equal(t, map[string]*nomad.HostVolumeInfo{"rw": {Path: rw}, "ro": {Path: ro, ReadOnly: true}}, node.HostVolumes)

	script := `cat /data/in.txt > /data/out.txt && echo "written by $NOMAD_ALLOC_ID at $TROUPE_VOLUME_DATA" >> /data/out.txt
cat /seed/seed.txt
if echo x > /seed/x; then echo ro-volume-writable; else echo ro-volume-refused; fi
if echo x > /view/x; then echo ro-mount-writable; else echo ro-mount-refused; fi`
	job := hostVolumeJob("hv", "exec", script,
		map[string]*nomad.VolumeRequest{"data": hostVol("rw", false), "seed": hostVol("ro", true), "view": hostVol("rw", false)},
		[]*nomad.VolumeMount{volMount("data", "/data", false), volMount("seed", "/seed", false), volMount("view", "/view", true)})
	_, _, err = c.Jobs().Register(job, nil)
	require.NoError(t, err)
	stub := waitAllocStatus(t, c, "hv", "complete")
	require.Equal(t, a.Node().GetID(), stub.NodeID)

	out, err := os.ReadFile(filepath.Join(rw, "out.txt"))
	require.NoError(t, err, "the task's write lands in the host directory")
	require.Equal(t, "placed before in.txt\nwritten by "+stub.ID+" at /data\n", string(out))
	logs, err := os.ReadFile(filepath.Join(a.AllocDir(), stub.ID, "alloc", "logs", "t.stdout.0"))
	require.NoError(t, err)
	require.Equal(t, "placed before seed.txt\nro-volume-refused\nro-mount-refused\n", string(logs))
	for _, p := range []string{filepath.Join(ro, "x"), filepath.Join(rw, "x")} {
		require.NoFileExists(t, p, "a read-only mount let a write through")
	}
	require.NoDirExists(t, filepath.Join(a.AllocDir(), stub.ID, "t", "data"), "the volume is in the task's root, not its task dir")
}

// TestHostVolumesRefused: a group asking to write a read-only host volume,
// or one the node lacks, is not placed ("missing compatible host
// volumes"); a raw_exec task with a host volume fails as Nomad's does,
// writing nothing at its destination on the host.
func TestHostVolumesRefused(t *testing.T) {
	a, c, _, _ := hostVolumeAgent(t)
	defer a.Shutdown()
	for id, vol := range map[string]*nomad.VolumeRequest{"rw-on-ro": hostVol("ro", false), "missing": hostVol("nope", true)} {
		job := hostVolumeJob(id, "exec", "true", map[string]*nomad.VolumeRequest{"data": vol},
			[]*nomad.VolumeMount{volMount("data", "/data", false)})
		resp, _, err := c.Jobs().Register(job, nil)
		require.NoError(t, err)
		var eval *nomad.Evaluation
		require.Eventually(t, func() bool {
			eval, _, err = c.Evaluations().Info(resp.EvalID, nil)
			require.NoError(t, err)
			return eval.Status == "complete"
		}, 20*time.Second, 20*time.Millisecond)
		m := eval.FailedTGAllocs["g"]
		require.NotNil(t, m, "%s: %+v", id, eval)
		require.Equal(t, map[string]int{scheduler.FilterHostVolumes: 1}, m.ConstraintFiltered, id)
		allocs, _, err := c.Jobs().Allocations(id, false, nil)
		require.NoError(t, err)
		require.Empty(t, allocs, id)
	}

	dst := filepath.Join("/", "troupe-hostvol-test-"+strings.ReplaceAll(a.Node().GetID(), "-", ""))
	job := hostVolumeJob("raw", "raw_exec", "echo x > "+dst+"/f", map[string]*nomad.VolumeRequest{"data": hostVol("rw", false)},
		[]*nomad.VolumeMount{volMount("data", dst, false)})
	_, _, err := c.Jobs().Register(job, nil)
	require.NoError(t, err)
	stub := waitAllocStatus(t, c, "raw", "failed")
	full, _, err := c.Allocations().Info(stub.ID, nil)
	require.NoError(t, err)
	ev := full.TaskStates["t"].Events
	require.NotEmpty(t, ev)
	require.Contains(t, ev[len(ev)-1].DisplayMessage, `task driver "raw_exec" for "t" does not support host volumes`)
	require.NoDirExists(t, dst)
}

// TestHostVolumesContainerd: a containerd task gets a host volume as an
// OCI bind mount at its destination: it reads the file placed there,
// its write lands in the host directory, and a read-only mount refuses
// a write.
func TestHostVolumesContainerd(t *testing.T) {
	dm := ctrdtest.StartDaemon(t)
	archive, _ := ctrdtest.BusyboxArchive(t, t.TempDir())
	rw := t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(rw, "in.txt"), []byte("placed before\n"), 0o644))
	cfg := testConfig(t, t.TempDir())
	cfg.ContainerdAddress, cfg.ContainerdNamespace = dm.Address(), dm.Namespace()
	require.NoError(t, cfg.AddHostVolume("rw="+rw))
	a := startAgent(t, cfg)
	defer a.Shutdown()
	c, err := nomad.NewClient(&nomad.Config{Address: "http://" + a.HTTPAddr()})
	require.NoError(t, err)

	script := `cat /data/in.txt > /data/out.txt && echo from-container >> /data/out.txt
if echo x > /view/x; then echo ro-mount-writable; else echo ro-mount-refused; fi`
	job := hostVolumeJob("ctr", "containerd", "", map[string]*nomad.VolumeRequest{"data": hostVol("rw", false)},
		[]*nomad.VolumeMount{volMount("data", "/data", false), volMount("data", "/view", true)})
	job.TaskGroups[0].Tasks[0].Config = map[string]any{"image": containerd.ArchiveScheme + archive,
		"command": "/bin/busybox", "args": []string{"sh", "-c", script}}
	_, _, err = c.Jobs().Register(job, nil)
	require.NoError(t, err)
	stub := waitAllocStatus(t, c, "ctr", "complete")
	out, err := os.ReadFile(filepath.Join(rw, "out.txt"))
	require.NoError(t, err, "the container's write lands in the host directory")
	require.Equal(t, "placed before\nfrom-container\n", string(out))
	stdout, err := a.TaskLogPath(stub.ID, "t", "stdout")
	require.NoError(t, err)
	require.Equal(t, "ro-mount-refused\n", readLog(stdout))
	require.NoFileExists(t, filepath.Join(rw, "x"))
}
