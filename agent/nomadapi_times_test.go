package agent

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"testing"
	"time"

	nomad "github.com/hashicorp/nomad/api"
	"github.com/stretchr/testify/require"

	"github.com/troupe-dev/troupe/api"
	"github.com/troupe-dev/troupe/messages"
)

// TestNomadClientReadsTimesAndZeros: the fields Nomad's JSON has as times
// (an evaluation's WaitUntil, a drain's ForceDeadline and StartedAt) reach
// Nomad's client as times and ours as the same instants, and an
// evaluation that waits for nothing does not trip Nomad's client with a
// number where it reads a time.
func TestNomadClientReadsTimesAndZeros(t *testing.T) {
	a := startAgent(t, testConfig(t, t.TempDir()))
	defer a.Shutdown()
	c, err := nomad.NewClient(&nomad.Config{Address: "http://" + a.HTTPAddr()})
	require.NoError(t, err)
	ours, err := api.NewClient(&api.Config{Address: "http://" + a.HTTPAddr()})
	require.NoError(t, err)

	wait := time.Now().Add(time.Hour).Truncate(time.Microsecond)
	delayed := &messages.Evaluation{ID: "0b4e0c8c-8a39-4bb0-9d4b-7a3e7e7f0001", Namespace: "default", JobID: "later",
		Type: "service", TriggeredBy: "alloc-failure", Status: "pending", WaitUntil: wait.UnixNano(), Priority: 50}
	now := &messages.Evaluation{ID: "0b4e0c8c-8a39-4bb0-9d4b-7a3e7e7f0002", Namespace: "default", JobID: "later",
		Type: "service", TriggeredBy: "job-register", Status: "blocked", Priority: 50}
	_, _, err = a.Apply(context.Background(), &messages.Command{Cmd: &messages.Command_UpsertEvals{
		UpsertEvals: &messages.UpsertEvals{Evals: []*messages.Evaluation{delayed, now}}}})
	require.NoError(t, err)

	got, _, err := c.Evaluations().Info(delayed.ID, nil)
	require.NoError(t, err)
	require.True(t, wait.Equal(got.WaitUntil), "Nomad's client reads %v, want %v", got.WaitUntil, wait)
	got, _, err = c.Evaluations().Info(now.ID, nil)
	require.NoError(t, err)
	require.True(t, got.WaitUntil.IsZero())
	require.Equal(t, "blocked", got.Status)
	list, _, err := c.Evaluations().List(nil)
	require.NoError(t, err, "a list holding a delayed evaluation")
	require.GreaterOrEqual(t, len(list), 2)
	back, _, err := ours.Evaluations().Info(delayed.ID, nil)
	require.NoError(t, err)
	require.Equal(t, wait.UnixNano(), back.GetWaitUntil(), "our client reads the time back as unix nanos")

	// A drain lasts while an allocation takes its time to stop (it ignores
	// SIGTERM for its 30 s kill_timeout); one response body is read by both
	// clients' types.
	slow := startsJob("slow", 1)
	slow.TaskGroups[0].Tasks[0].Config["args"] = []string{"-c", `trap "" TERM; while true; do sleep 0.2; done`}
	slow.TaskGroups[0].Tasks[0].KillTimeout = ptr(30 * time.Second)
	_, _, err = c.Jobs().Register(slow, nil)
	require.NoError(t, err)
	waitAllocStatus(t, c, "slow", "running")
	node := a.Node().GetID()
	_, err = c.Nodes().UpdateDrain(node, &nomad.DrainSpec{Deadline: 30 * time.Minute}, false, nil)
	require.NoError(t, err)
	resp, err := http.Get("http://" + a.HTTPAddr() + "/v1/node/" + node)
	require.NoError(t, err)
	body, err := io.ReadAll(resp.Body)
	resp.Body.Close()
	require.NoError(t, err)
	var info nomad.Node
	require.NoError(t, json.Unmarshal(body, &info), "Nomad's client reads a draining node")
	require.NotNil(t, info.DrainStrategy)
	require.Equal(t, 30*time.Minute, info.DrainStrategy.Deadline)
	require.False(t, info.DrainStrategy.StartedAt.IsZero())
	require.Equal(t, 30*time.Minute, info.DrainStrategy.ForceDeadline.Sub(info.DrainStrategy.StartedAt))
	var n messages.Node
	require.NoError(t, json.Unmarshal(body, &n))
	require.Equal(t, info.DrainStrategy.ForceDeadline.UnixNano(), n.GetDrainStrategy().GetForceDeadline())
	require.Equal(t, info.DrainStrategy.StartedAt.UnixNano(), n.GetDrainStrategy().GetStartedAt())
}
