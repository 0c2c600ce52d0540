package alloc

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"sync/atomic"
	"testing"
	"time"

	"github.com/asynkron/protoactor-go/actor"
	"github.com/stretchr/testify/require"
	"google.golang.org/protobuf/proto"

	"github.com/troupe-dev/troupe/messages"
	"github.com/troupe-dev/troupe/runtime/driver"
)

// artifactAlloc is testAlloc with one artifact from src.
func artifactAlloc(jobType string, config map[string]any, pol *messages.RestartPolicy, art *messages.TaskArtifact) *messages.Allocation {
	a := testAlloc(jobType, config, pol)
	a.Job.TaskGroups[0].Tasks[0].Artifacts = []*messages.TaskArtifact{art}
	return a
}

func hasEvent(st *messages.TaskState, typ string) bool {
	for _, e := range st.GetEvents() {
		if e.GetType() == typ {
			return true
		}
	}
	return false
}

// TestArtifactFetchedBeforeStartOnce: the artifact is in the task dir
// before the driver starts the task, and a restart does not fetch it
// again.
func TestArtifactFetchedBeforeStartOnce(t *testing.T) {
	var gets atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodGet {
			gets.Add(1)
		}
		_, _ = w.Write([]byte("conf"))
	}))
	defer srv.Close()
	h := newHarness(t)
	pol := &messages.RestartPolicy{Attempts: 1, Interval: int64(time.Hour), Delay: int64(10 * time.Second), Mode: "fail"}
	a := artifactAlloc("service", map[string]any{"exit_code": 1}, pol,
		&messages.TaskArtifact{GetterSource: srv.URL + "/app.conf", RelativeDest: "local/"})
	var seen atomic.Bool // the file was there when StartTask ran
	h.drivers = map[string]driver.Driver{"fake": &startCheck{Fake: h.fake, check: func() {
		_, err := os.Stat(filepath.Join(h.root, a.ID, "t", "local", "app.conf"))
		seen.Store(err == nil)
	}}}
	h.spawn(a)
	h.waitFor("restart pending", func(a *messages.Allocation) bool { return a.TaskStates["t"].GetRestarts() == 1 })
	require.True(t, seen.Load(), "the artifact is in place when the driver starts the task")
	require.Eventually(t, func() bool { return h.clock.Pending() == 1 }, 5*time.Second, time.Millisecond)
	h.clock.Advance(10 * time.Second)
	failed := h.waitFor("failed", status(statusFailed))
	require.Equal(t, 2, h.fake.Calls(driver.MethodStartTask))
	require.Equal(t, int32(1), gets.Load(), "a restart does not fetch again")
	require.True(t, hasEvent(failed.TaskStates["t"], eventDownloadingArtifacts))
}

// startCheck is the fake driver, with check run at every start.
type startCheck struct {
	*driver.Fake
	check func()
}

func (d *startCheck) StartTask(ctx context.Context, cfg *driver.TaskConfig) (*driver.TaskHandle, error) {
	d.check()
	return d.Fake.StartTask(ctx, cfg)
}

// TestArtifactFailureRetriedUnderRestartPolicy: a wrong checksum is a
// Failed Artifact Download; the task is restarted under its policy (the
// fetch runs again) and then fails, never started by the driver.
func TestArtifactFailureRetriedUnderRestartPolicy(t *testing.T) {
	var gets atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodGet {
			gets.Add(1)
		}
		_, _ = w.Write([]byte("body"))
	}))
	defer srv.Close()
	sum := sha256.Sum256([]byte("other"))
	h := newHarness(t)
	pol := &messages.RestartPolicy{Attempts: 1, Interval: int64(time.Hour), Delay: int64(10 * time.Second), Mode: "fail"}
	h.spawn(artifactAlloc("service", map[string]any{}, pol, &messages.TaskArtifact{
		GetterSource: srv.URL + "/f", GetterOptions: map[string]string{"checksum": "sha256:" + hex.EncodeToString(sum[:])}}))
	pending := h.waitFor("restart pending", func(a *messages.Allocation) bool { return a.TaskStates["t"].GetRestarts() == 1 })
	require.True(t, hasEvent(pending.TaskStates["t"], eventArtifactFailed))
	require.Eventually(t, func() bool { return h.clock.Pending() == 1 }, 5*time.Second, time.Millisecond)
	h.clock.Advance(10 * time.Second)
	failed := h.waitFor("failed", status(statusFailed))
	require.Zero(t, h.fake.Calls(driver.MethodStartTask))
	require.Equal(t, int32(2), gets.Load())
	st := failed.TaskStates["t"]
	require.True(t, st.Failed)
	var ev *messages.TaskEvent
	for _, e := range st.Events {
		if e.Type == eventArtifactFailed {
			ev = e
		}
	}
	require.NotNil(t, ev)
	require.Contains(t, ev.DisplayMessage, "checksum mismatch")
	require.Equal(t, ev.DisplayMessage, ev.Details["download_error"])
	require.Equal(t, eventNotRestarting, st.Events[len(st.Events)-1].Type)
}

// TestKillCutsArtifactFetchShort: a stop while an artifact downloads
// from a server that never answers ends the fetch and the task at once,
// killed, never started.
func TestKillCutsArtifactFetchShort(t *testing.T) {
	arrived := make(chan struct{}, 1)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		select {
		case arrived <- struct{}{}:
		default:
		}
		<-r.Context().Done()
	}))
	defer srv.Close()
	h := newHarness(t)
	a := artifactAlloc("service", map[string]any{}, nil, &messages.TaskArtifact{GetterSource: srv.URL + "/slow"})
	h.spawn(a)
	select {
	case <-arrived:
	case <-time.After(5 * time.Second):
		t.Fatal("the fetch never reached the server")
	}
	stop := proto.Clone(a).(*messages.Allocation)
	stop.DesiredStatus = "stop"
	h.sys.Root.Send(actor.NewPID("nonhost", "client/allocs/"+a.ID), &messages.UpdateAlloc{Alloc: stop})
	done := h.waitFor("complete", status(statusComplete))
	st := done.TaskStates["t"]
	require.Equal(t, taskDead, st.State)
	require.Equal(t, eventKilled, st.Events[len(st.Events)-1].Type)
	require.Zero(t, h.fake.Calls(driver.MethodStartTask))
}

// TestTaskArtifactsInterpolated: source, destination, options and headers
// take the task's environment; a destination that became a host path
// beneath the task dir (raw_exec's NOMAD_TASK_DIR) is made relative.
func TestTaskArtifactsInterpolated(t *testing.T) {
	task := &messages.Task{Artifacts: []*messages.TaskArtifact{{
		GetterSource: "${NOMAD_META_base}/app.tgz", RelativeDest: "${NOMAD_TASK_DIR}/app", GetterMode: "any",
		GetterOptions: map[string]string{"checksum": "sha256:${NOMAD_META_sum}"}, GetterHeaders: map[string]string{"X-Job": "${NOMAD_JOB_NAME}"},
	}, {GetterSource: "http://h/a", RelativeDest: "/local/${missing}"}}}
	env := map[string]string{"NOMAD_META_base": "http://h", "NOMAD_TASK_DIR": "/data/alloc/x/t/local",
		"NOMAD_META_sum": "ab", "NOMAD_JOB_NAME": "web"}
	got := taskArtifacts(task, "/data/alloc/x/t", refs{env: env})
	require.Len(t, got, 2)
	require.Equal(t, "http://h/app.tgz", got[0].Source)
	require.Equal(t, "local/app", got[0].Destination)
	require.Equal(t, "sha256:ab", got[0].Options["checksum"])
	require.Equal(t, "web", got[0].Headers["X-Job"])
	require.Equal(t, "/local/${missing}", got[1].Destination, "an isolated task's /local stays for the fetcher to resolve in the task dir")
}
