package agent

import (
	"bytes"
	"net/http"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/golang/snappy"
	nomad "github.com/hashicorp/nomad/api"
	"github.com/stretchr/testify/require"
)

func parameterizedJob(id, payload, command string) *nomad.Job {
	job := nomad.NewBatchJob(id, id, "global", 50)
	job.ParameterizedJob = &nomad.ParameterizedJobConfig{Payload: payload, MetaRequired: []string{"scene"}, MetaOptional: []string{"quality"}}
	job.Meta = map[string]string{"scene": "parent-default", "team": "render"}
	tg := nomad.NewTaskGroup("g", 1)
	tg.RestartPolicy = &nomad.RestartPolicy{Attempts: ptr(0), Mode: ptr("fail")}
	task := nomad.NewTask("t", "exec").SetConfig("command", "/bin/sh").
		SetConfig("args", []string{"-c", command}).
		Require(&nomad.Resources{CPU: ptr(20), MemoryMB: ptr(32)})
	task.DispatchPayload = &nomad.DispatchPayloadConfig{File: "in/scene.txt"}
	tg.AddTask(task)
	job.AddTaskGroup(tg)
	return job
}

// TestDispatchThroughNomadClient: a parameterized job registered with
// Nomad's client is not evaluated and shows as running; a dispatch with a
// payload and meta creates a child that runs a real task, which reads
// the payload from local/in/scene.txt and the meta from $NOMAD_META_*;
// the same idempotency token answers the same child; bad payloads and
// meta are 400s that create nothing.
func TestDispatchThroughNomadClient(t *testing.T) {
	a := startAgent(t, testConfig(t, t.TempDir()))
	defer a.Shutdown()
	c, err := nomad.NewClient(&nomad.Config{Address: "http://" + a.HTTPAddr()})
	require.NoError(t, err)

	script := `printf 'payload=%s\n' "$(cat "$NOMAD_TASK_DIR/in/scene.txt")"; echo "meta=$NOMAD_META_scene/$NOMAD_META_QUALITY/$NOMAD_META_team"`
	resp, _, err := c.Jobs().Register(parameterizedJob("render", "required", script), nil)
	require.NoError(t, err)
	require.Empty(t, resp.EvalID, "a parameterized job is not evaluated itself")
	got, _, err := c.Jobs().Info("render", nil)
	require.NoError(t, err)
	require.True(t, got.IsParameterized())
	require.Equal(t, "running", *got.Status)
	allocs, _, err := c.Jobs().Allocations("render", false, nil)
	require.NoError(t, err)
	require.Empty(t, allocs, "nothing is placed for the parent")

	wo := &nomad.WriteOptions{IdempotencyToken: "tok-1"}
	d, _, err := c.Jobs().Dispatch("render", map[string]string{"scene": "s1", "quality": "hi"}, []byte("frames=3"), "", wo)
	require.NoError(t, err)
	require.Regexp(t, regexp.MustCompile(`^render/dispatch-\d{10}-[0-9a-f]{8}$`), d.DispatchedJobID)
	require.NotEmpty(t, d.EvalID)
	require.NotZero(t, d.JobCreateIndex)

	child, _, err := c.Jobs().Info(d.DispatchedJobID, nil)
	require.NoError(t, err)
	require.Equal(t, "render", *child.ParentID)
	require.True(t, child.Dispatched)
	require.False(t, child.IsParameterized())
	require.Equal(t, "tok-1", *child.DispatchIdempotencyToken)
	require.Equal(t, map[string]string{"scene": "s1", "quality": "hi", "team": "render"}, child.Meta)
	require.Equal(t, snappy.Encode(nil, []byte("frames=3")), child.Payload,
		"the job's Payload is snappy-compressed, as Nomad stores it; the task reads it plain")

	stub := waitAllocStatus(t, c, d.DispatchedJobID, "complete")
	stdout, err := a.TaskLogPath(stub.ID, "t", "stdout")
	require.NoError(t, err)
	require.Eventually(t, func() bool { return strings.Contains(readLog(stdout), "meta=") }, 10*time.Second, 20*time.Millisecond)
	log := readLog(stdout)
	require.Contains(t, log, "payload=frames=3\n", "the payload is in local/in/scene.txt")
	require.Contains(t, log, "meta=s1/hi/render\n", "the dispatch's meta over the parent's, as NOMAD_META_*")

	// The same token answers the same child and makes nothing new.
	again, _, err := c.Jobs().Dispatch("render", map[string]string{"scene": "s2"}, []byte("other"), "", wo)
	require.NoError(t, err)
	require.Equal(t, d.DispatchedJobID, again.DispatchedJobID)
	require.Empty(t, again.EvalID)
	require.Len(t, periodicChildren(c, "render"), 1)

	// Racing dispatches with one new token make one child (the FSM decides).
	ids := make([]string, 8)
	var wg sync.WaitGroup
	for i := range ids {
		wg.Go(func() {
			r, _, err := c.Jobs().Dispatch("render", map[string]string{"scene": "race"}, []byte("x"), "",
				&nomad.WriteOptions{IdempotencyToken: "race"})
			if err == nil {
				ids[i] = r.DispatchedJobID
			}
		})
	}
	wg.Wait()
	for _, id := range ids {
		require.Equal(t, ids[0], id)
	}
	require.Len(t, periodicChildren(c, "render"), 2)

	// An id prefix template is part of the child's ID.
	tmpl, _, err := c.Jobs().Dispatch("render", map[string]string{"scene": "s3"}, []byte("x"), "nightly", nil)
	require.NoError(t, err)
	require.Regexp(t, regexp.MustCompile(`^render/dispatch-nightly-\d{10}-[0-9a-f]{8}$`), tmpl.DispatchedJobID)

	// Nomad's dispatch priority sets the child's.
	pri, _, err := c.Jobs().DispatchOpts(&nomad.DispatchOptions{JobID: "render", Meta: map[string]string{"scene": "s4"},
		Payload: []byte("x"), Priority: 80}, nil)
	require.NoError(t, err)
	priJob, _, err := c.Jobs().Info(pri.DispatchedJobID, nil)
	require.NoError(t, err)
	require.Equal(t, 80, *priJob.Priority)

	plain := nomad.NewBatchJob("plain", "plain", "global", 50)
	ptg := nomad.NewTaskGroup("g", 1)
	ptg.AddTask(nomad.NewTask("t", "exec").SetConfig("command", "/bin/true").Require(&nomad.Resources{CPU: ptr(20), MemoryMB: ptr(16)}))
	plain.AddTaskGroup(ptg)
	_, _, err = c.Jobs().Register(plain, nil)
	require.NoError(t, err)
	_, _, err = c.Jobs().Register(parameterizedJob("quiet", "forbidden", "true"), nil)
	require.NoError(t, err)

	before, _, err := c.Jobs().List(nil)
	require.NoError(t, err)
	for _, tc := range []struct {
		name    string
		job     string
		meta    map[string]string
		payload []byte
		want    string
	}{
		{"required payload missing", "render", map[string]string{"scene": "s"}, nil, "payload is not provided but required"},
		{"forbidden payload given", "quiet", map[string]string{"scene": "s"}, []byte("x"), "payload provided but forbidden"},
		{"payload too large uncompressed", "render", map[string]string{"scene": "s"}, bytes.Repeat([]byte("x"), 16*1024+1), "payload exceeds maximum size; 16385 > 16384"},
		{"required meta missing", "render", map[string]string{"quality": "hi"}, []byte("x"), "did not provide required meta keys: [scene]"},
		{"meta not allowed", "render", map[string]string{"scene": "s", "color": "red"}, []byte("x"), "unpermitted metadata keys: [color]"},
		{"not parameterized", "plain", nil, nil, `job "plain" is not a parameterized job`},
		{"a dispatched child", d.DispatchedJobID, map[string]string{"scene": "s"}, []byte("x"), "is not a parameterized job"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, _, err := c.Jobs().Dispatch(tc.job, tc.meta, tc.payload, "", nil)
			requireRefused(t, err, tc.want)
		})
	}
	_, _, err = c.Jobs().DispatchOpts(&nomad.DispatchOptions{JobID: "render", Meta: map[string]string{"scene": "s"},
		Payload: []byte("x"), Priority: 101}, nil)
	requireRefused(t, err, "priority 101 must be between 1 and 100")
	_, _, err = c.Jobs().Dispatch("nobody", nil, nil, "", nil)
	require.Equal(t, http.StatusNotFound, statusCode(t, err))
	after, _, err := c.Jobs().List(nil)
	require.NoError(t, err)
	require.Len(t, after, len(before), "refused dispatches create nothing")

	// Stopping the parent refuses dispatches.
	_, _, err = c.Jobs().Deregister("render", false, nil)
	require.NoError(t, err)
	_, _, err = c.Jobs().Dispatch("render", map[string]string{"scene": "s"}, []byte("x"), "", nil)
	requireRefused(t, err, `job "render" is stopped`)

	sum, _, err := c.Jobs().Summary("render", nil)
	require.NoError(t, err)
	require.NotNil(t, sum.Children)
	require.EqualValues(t, 4, sum.Children.Pending+sum.Children.Running+sum.Children.Dead)
}
