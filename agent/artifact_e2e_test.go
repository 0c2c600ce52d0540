//go:build linux

package agent

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"crypto/sha256"
	"encoding/hex"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	nomad "github.com/hashicorp/nomad/api"
	"github.com/stretchr/testify/require"
)

// artifactServer serves files by path and counts the GETs of each.
func artifactServer(t *testing.T, files map[string][]byte) (*httptest.Server, map[string]*atomic.Int32) {
	t.Helper()
	gets := map[string]*atomic.Int32{}
	for p := range files {
		gets[p] = new(atomic.Int32)
	}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, ok := files[r.URL.Path]
		if !ok {
			http.NotFound(w, r)
			return
		}
		if r.Method == http.MethodGet {
			gets[r.URL.Path].Add(1)
		}
		_, _ = w.Write(body)
	}))
	t.Cleanup(srv.Close)
	return srv, gets
}

func sha256Of(b []byte) string {
	s := sha256.Sum256(b)
	return "sha256:" + hex.EncodeToString(s[:])
}

// artifactJob is a batch raw_exec job whose task runs script after its
// artifacts are fetched; it is neither restarted nor rescheduled.
func artifactJob(id, script string, arts ...*nomad.TaskArtifact) *nomad.Job {
	job := nomad.NewBatchJob(id, id, "global", 50)
	tg := nomad.NewTaskGroup("g", 1)
	tg.RestartPolicy = &nomad.RestartPolicy{Attempts: ptr(0), Mode: ptr("fail"), Interval: ptr(time.Minute), Delay: ptr(time.Second)}
	tg.ReschedulePolicy = &nomad.ReschedulePolicy{Attempts: ptr(0), Unlimited: ptr(false)}
	task := nomad.NewTask("t", "raw_exec").SetConfig("command", "/bin/sh").SetConfig("args", []string{"-c", script}).
		Require(&nomad.Resources{CPU: ptr(100), MemoryMB: ptr(32)})
	task.Artifacts = arts
	tg.AddTask(task)
	job.AddTaskGroup(tg)
	return job
}

func eventTypes(st *nomad.TaskState) []string {
	var out []string
	for _, e := range st.Events {
		out = append(out, e.Type)
	}
	return out
}

// TestArtifactFetchedBeforeTaskStarts: a task's artifacts, served by the
// test's HTTP server, are in its task dir when it starts: a file with its
// right checksum in local/, and a tar.gz unpacked where its destination
// says; the task reads both, and its events say the download came first.
// Then the same for an exec task, which sees them in its own root's
// /local.
func TestArtifactFetchedBeforeTaskStarts(t *testing.T) {
	hello := []byte("hello from the artifact\n")
	var buf bytes.Buffer
	zw := gzip.NewWriter(&buf)
	tw := tar.NewWriter(zw)
	msg := "unpacked from the archive\n"
	require.NoError(t, tw.WriteHeader(&tar.Header{Name: "bin/msg", Mode: 0o644, Size: int64(len(msg)), Typeflag: tar.TypeReg}))
	_, err := tw.Write([]byte(msg))
	require.NoError(t, err)
	require.NoError(t, tw.Close())
	require.NoError(t, zw.Close())
	srv, gets := artifactServer(t, map[string][]byte{"/hello.txt": hello, "/app.tar.gz": buf.Bytes()})

	a, c := rawExecAgent(t)

	job := artifactJob("art", `cat "$NOMAD_TASK_DIR/hello.txt" "$NOMAD_TASK_DIR/app/bin/msg"`,
		&nomad.TaskArtifact{GetterSource: ptr(srv.URL + "/hello.txt"), GetterOptions: map[string]string{"checksum": sha256Of(hello)}},
		&nomad.TaskArtifact{GetterSource: ptr(srv.URL + "/app.tar.gz"), RelativeDest: ptr("local/app")})
	_, _, err = c.Jobs().Register(job, nil)
	require.NoError(t, err)
	stub := waitAllocStatus(t, c, "art", "complete")
	got, _, err := c.Jobs().Info("art", nil)
	require.NoError(t, err)
	arts := got.TaskGroups[0].Tasks[0].Artifacts
	require.Len(t, arts, 2, "the job reads back with its artifacts")
	require.Equal(t, "local/", *arts[0].RelativeDest, "Nomad's default destination")
	require.Equal(t, "any", *arts[0].GetterMode)
	require.Equal(t, sha256Of(hello), arts[0].GetterOptions["checksum"])
	out := readLog(filepath.Join(a.AllocDir(), stub.ID, "alloc", "logs", "t.stdout"))
	require.Equal(t, string(hello)+msg, out)
	require.Equal(t, int32(1), gets["/hello.txt"].Load())
	require.Equal(t, int32(1), gets["/app.tar.gz"].Load())

	alloc, _, err := c.Allocations().Info(stub.ID, nil)
	require.NoError(t, err)
	types := eventTypes(alloc.TaskStates["t"])
	require.Contains(t, types, "Downloading Artifacts")
	require.Contains(t, types, "Started")
	require.Less(t, indexOf(types, "Downloading Artifacts"), indexOf(types, "Started"), "%v", types)
	require.False(t, alloc.TaskStates["t"].Failed)

	job = artifactJob("art-exec", `cat /local/hello.txt /local/app/bin/msg`,
		&nomad.TaskArtifact{GetterSource: ptr(srv.URL + "/hello.txt"), GetterOptions: map[string]string{"checksum": sha256Of(hello)}},
		&nomad.TaskArtifact{GetterSource: ptr(srv.URL + "/app.tar.gz"), RelativeDest: ptr("local/app")})
	job.TaskGroups[0].Tasks[0].Driver = "exec"
	_, _, err = c.Jobs().Register(job, nil)
	require.NoError(t, err)
	stub = waitAllocStatus(t, c, "art-exec", "complete")
	require.Equal(t, string(hello)+msg, readLog(filepath.Join(a.AllocDir(), stub.ID, "alloc", "logs", "t.stdout")))
	require.Equal(t, int32(2), gets["/hello.txt"].Load())
}

// TestArtifactWrongChecksumFailsTask: an artifact whose checksum is not
// the file's gives the task a "Failed Artifact Download" event naming the
// mismatch, the restart policy (no attempts) fails the task, and the task
// never runs: no Started event, nothing in its log, no file placed.
func TestArtifactWrongChecksumFailsTask(t *testing.T) {
	body := []byte("the real content\n")
	srv, gets := artifactServer(t, map[string][]byte{"/hello.txt": body})
	a, c := rawExecAgent(t)
	var err error

	wrong := sha256Of([]byte("something else"))
	job := artifactJob("bad-sum", `echo ran; cat "$NOMAD_TASK_DIR/hello.txt"`,
		&nomad.TaskArtifact{GetterSource: ptr(srv.URL + "/hello.txt"), GetterOptions: map[string]string{"checksum": wrong}})
	_, _, err = c.Jobs().Register(job, nil)
	require.NoError(t, err)
	stub := waitAllocStatus(t, c, "bad-sum", "failed")
	alloc, _, err := c.Allocations().Info(stub.ID, nil)
	require.NoError(t, err)
	st := alloc.TaskStates["t"]
	require.True(t, st.Failed)
	types := eventTypes(st)
	require.NotContains(t, types, "Started", "%v", types)
	var failed *nomad.TaskEvent
	for _, e := range st.Events {
		if e.Type == "Failed Artifact Download" {
			failed = e
		}
	}
	require.NotNil(t, failed, "%v", types)
	require.Contains(t, failed.DisplayMessage, "checksum mismatch")
	require.Contains(t, failed.DisplayMessage, strings.TrimPrefix(wrong, "sha256:"))
	require.Contains(t, failed.Details["download_error"], "checksum mismatch")
	require.Contains(t, types, "Not Restarting")
	require.GreaterOrEqual(t, gets["/hello.txt"].Load(), int32(1))
	require.Empty(t, readLog(filepath.Join(a.AllocDir(), stub.ID, "alloc", "logs", "t.stdout")))
	require.NoFileExists(t, filepath.Join(a.AllocDir(), stub.ID, "t", "local", "hello.txt"))
}

// TestArtifactRetriedUnderRestartPolicy: an artifact larger than the
// client's limit fails its download each time; the restart policy
// (one attempt) has it fetched twice, then fails the task, which never
// ran.
func TestArtifactRetriedUnderRestartPolicy(t *testing.T) {
	srv, gets := artifactServer(t, map[string][]byte{"/big.bin": bytes.Repeat([]byte("x"), 64<<10)})
	cfg := testConfig(t, t.TempDir())
	cfg.RawExecEnabled = true
	cfg.Artifacts.HTTPMaxBytes = 1 << 10
	a := startAgent(t, cfg)
	defer a.Shutdown()
	c, err := nomad.NewClient(&nomad.Config{Address: "http://" + a.HTTPAddr()})
	require.NoError(t, err)

	job := artifactJob("big", "echo ran", &nomad.TaskArtifact{GetterSource: ptr(srv.URL + "/big.bin")})
	job.TaskGroups[0].RestartPolicy.Attempts = ptr(1)
	job.TaskGroups[0].RestartPolicy.Delay = ptr(100 * time.Millisecond)
	_, _, err = c.Jobs().Register(job, nil)
	require.NoError(t, err)
	stub := waitAllocStatus(t, c, "big", "failed")
	alloc, _, err := c.Allocations().Info(stub.ID, nil)
	require.NoError(t, err)
	st := alloc.TaskStates["t"]
	types := eventTypes(st)
	require.NotContains(t, types, "Started", "%v", types)
	var fails []string
	for _, e := range st.Events {
		if e.Type == "Failed Artifact Download" {
			fails = append(fails, e.DisplayMessage)
		}
	}
	require.Len(t, fails, 2, "%v", types)
	require.Contains(t, fails[0], "size limit")
	require.Equal(t, uint64(1), st.Restarts)
	require.Less(t, indexOf(types, "Restarting"), indexOf(types, "Not Restarting"), "%v", types)
	require.Equal(t, int32(2), gets["/big.bin"].Load())
	require.Empty(t, readLog(filepath.Join(a.AllocDir(), stub.ID, "alloc", "logs", "t.stdout")))
}

// TestArtifactBadSpecRefused: an artifact that would escape the task
// dir, or has a checksum of an unknown type, is a 400 naming it, and no
// job is registered.
func TestArtifactBadSpecRefused(t *testing.T) {
	a := startAgent(t, testConfig(t, t.TempDir()))
	defer a.Shutdown()
	c, err := nomad.NewClient(&nomad.Config{Address: "http://" + a.HTTPAddr()})
	require.NoError(t, err)
	for _, tc := range []struct {
		art  *nomad.TaskArtifact
		want string
	}{
		{&nomad.TaskArtifact{GetterSource: ptr("http://h/a"), RelativeDest: ptr("../../etc")}, "escapes the task directory"},
		{&nomad.TaskArtifact{GetterSource: ptr("http://h/a"), GetterOptions: map[string]string{"checksum": "crc32:00"}}, `checksum type "crc32" is not supported`},
		{&nomad.TaskArtifact{GetterSource: ptr("")}, "source must be set"},
	} {
		_, _, err := c.Jobs().Register(artifactJob("bad", "true", tc.art), nil)
		require.Error(t, err)
		require.Contains(t, err.Error(), "400")
		require.Contains(t, err.Error(), tc.want)
	}
	jobs, _, err := c.Jobs().List(nil)
	require.NoError(t, err)
	require.Empty(t, jobs)
}

func indexOf(list []string, s string) int {
	for i, v := range list {
		if v == s {
			return i
		}
	}
	return -1
}
