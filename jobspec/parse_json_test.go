package jobspec

import (
	"encoding/json"
	"errors"
	"os"
	"testing"
	"time"

	"github.com/hashicorp/nomad/api"
	"github.com/stretchr/testify/require"
	"github.com/troupe-dev/troupe/messages"
	"google.golang.org/protobuf/proto"
)

// nomadJob builds a job with Nomad's own Go client, as an external program
// driving troupe's HTTP API would.
func nomadJob() *api.Job {
	task := api.NewTask("server", "exec").
		SetConfig("command", "/bin/sh").
		SetConfig("args", []string{"-c", "echo hi"}).
		Require(&api.Resources{CPU: new(250), MemoryMB: new(512)}).
		Constrain(api.NewConstraint("${attr.kernel.name}", "=", "linux"))
	task.KillTimeout = new(7 * time.Second)
	task.Env = map[string]string{"ALLOC": "${NOMAD_ALLOC_ID}"}
	group := api.NewTaskGroup("web", 3).AddTask(task)
	group.RestartPolicy = &api.RestartPolicy{Attempts: new(4), Interval: new(10 * time.Minute),
		Delay: new(20 * time.Second), Mode: new("delay")}
	job := api.NewServiceJob("web", "web", "global", 50).AddTaskGroup(group)
	job.Datacenters = []string{"dc1"}
	return job
}

func TestParseJSONFromNomadClient(t *testing.T) {
	body, err := json.Marshal(api.JobRegisterRequest{Job: nomadJob()})
	require.NoError(t, err)
	job, err := ParseJSON(body)
	require.NoError(t, err)

	require.Equal(t, "web", job.ID)
	require.Equal(t, "web", job.Name)
	require.Equal(t, "global", job.Region)
	require.Equal(t, "service", job.Type)
	require.EqualValues(t, 50, job.Priority)
	require.Equal(t, []string{"dc1"}, job.Datacenters)
	require.Len(t, job.TaskGroups, 1)
	g := job.TaskGroups[0]
	require.Equal(t, "web", g.Name)
	require.EqualValues(t, 3, g.Count)
	requireProto(t, &messages.RestartPolicy{Attempts: 4, Interval: ns(10 * time.Minute),
		Delay: ns(20 * time.Second), Mode: "delay"}, g.RestartPolicy)
	require.Len(t, g.Tasks, 1)
	task := g.Tasks[0]
	require.Equal(t, "server", task.Name)
	require.Equal(t, "exec", task.Driver)
	require.Equal(t, "/bin/sh", task.Config.Fields["command"].GetStringValue())
	require.Equal(t, []any{"-c", "echo hi"}, task.Config.AsMap()["args"])
	require.EqualValues(t, 250, task.Resources.CPU)
	require.EqualValues(t, 512, task.Resources.MemoryMB)
	require.Equal(t, ns(7*time.Second), task.KillTimeout)
	require.Equal(t, "${NOMAD_ALLOC_ID}", task.Env["ALLOC"])
	requireProto(t, &messages.Constraint{LTarget: "${attr.kernel.name}", Operand: "=", RTarget: "linux"}, task.Constraints[0])

	Canonicalize(job)
	require.NoError(t, Validate(job))
	requireProto(t, g.RestartPolicy, task.RestartPolicy)
}

// TestParseJSONCanonicalNomadJob decodes a job after Nomad's own
// Canonicalize, which fills many fields troupe does not know.
func TestParseJSONCanonicalNomadJob(t *testing.T) {
	nj := nomadJob()
	nj.Canonicalize()
	body, err := json.Marshal(api.JobRegisterRequest{Job: nj})
	require.NoError(t, err)
	job, err := ParseJSON(body)
	require.NoError(t, err)
	Canonicalize(job)
	require.NoError(t, Validate(job))
	g := job.TaskGroups[0]
	requireProto(t, &messages.ReschedulePolicy{Delay: ns(30 * time.Second), DelayFunction: "exponential",
		MaxDelay: ns(time.Hour), Unlimited: true}, g.ReschedulePolicy)
	requireProto(t, &messages.LogConfig{MaxFiles: 10, MaxFileSizeMB: 10}, g.Tasks[0].LogConfig)
}

func TestParseJSONConfigMustBeObject(t *testing.T) {
	_, err := ParseJSON([]byte(`{"ID": "x", "TaskGroups": [{"Tasks": [{"Config": "x"}]}]}`))
	require.ErrorIs(t, err, ErrParse)
	require.Contains(t, err.Error(), "TaskGroups[0].Tasks[0].Config must be a JSON object")
}

func TestParseJSONBareJobEqualsWrapped(t *testing.T) {
	bare, err := json.Marshal(nomadJob())
	require.NoError(t, err)
	wrapped, err := json.Marshal(api.JobRegisterRequest{Job: nomadJob()})
	require.NoError(t, err)
	a, err := ParseJSON(bare)
	require.NoError(t, err)
	b, err := ParseJSON(wrapped)
	require.NoError(t, err)
	require.Equal(t, "web", a.ID)
	requireProto(t, a, b)
}

func TestParseJSONCountPresence(t *testing.T) {
	cases := []struct {
		name  string
		group string
		want  int32
	}{
		{"absent", `{"Name": "g"}`, 1},
		{"null", `{"Name": "g", "Count": null}`, 1},
		{"zero", `{"Name": "g", "Count": 0}`, 0},
		{"five", `{"Name": "g", "Count": 5}`, 5},
		{"lowercase key", `{"Name": "g", "count": 0}`, 0},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			job, err := ParseJSON([]byte(`{"ID": "j", "TaskGroups": [` + tc.group + `]}`))
			require.NoError(t, err)
			Canonicalize(job)
			require.Equal(t, tc.want, job.TaskGroups[0].Count)
		})
	}
}

func TestParseJSONIgnoresUnknownFields(t *testing.T) {
	job, err := ParseJSON([]byte(`{"Job": {"ID": "j", "Update": {"Stagger": 1}, "Spreads": null,
		"TaskGroups": [{"Name": "g", "EphemeralDisk": {"SizeMB": 300},
		"Tasks": [{"Name": "t", "Driver": "exec", "Templates": [], "Config": {"command": "/bin/true"}}]}]},
		"EnforceIndex": false, "Submission": null}`))
	require.NoError(t, err)
	require.Equal(t, "j", job.ID)
	require.Equal(t, "/bin/true", job.TaskGroups[0].Tasks[0].Config.Fields["command"].GetStringValue())
}

func TestParseJSONErrorsCarryPosition(t *testing.T) {
	cases := []struct {
		name      string
		src       string
		line, col int
		contains  string
	}{
		{"syntax", "{\n  \"Job\": {\n    \"ID\": ,\n  }\n}", 3, 11, "invalid character ','"},
		{"truncated", "{\n  \"Job\": {\n    \"ID\": \"a\"", 3, 14, "unexpected end"},
		{"type", "{\n  \"Job\": {\n    \"TaskGroups\": [{\"Count\": \"two\"}]\n  }\n}", 3, 34, "TaskGroups.Count"},
		{"not an object", "[1, 2]", 1, 1, "must be a JSON object"},
		{"job not an object", `{"Job": "web"}`, 1, 1, "Job must be a JSON object"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			_, err := ParseJSON([]byte(tc.src))
			require.Error(t, err)
			require.True(t, errors.Is(err, ErrParse))
			var pe *ParseError
			require.ErrorAs(t, err, &pe)
			require.Equal(t, tc.line, pe.Line, err.Error())
			require.Equal(t, tc.col, pe.Column, err.Error())
			require.Contains(t, err.Error(), tc.contains)
			require.Contains(t, err.Error(), "line ")
		})
	}
}

func TestEncodeJSONRoundTrip(t *testing.T) {
	src, err := os.ReadFile("testdata/full.hcl")
	require.NoError(t, err)
	job, err := Parse("full.hcl", src)
	require.NoError(t, err)
	// Zero values that ParseJSON would otherwise replace with defaults.
	g := job.TaskGroups[0]
	g.Count = 0
	g.RestartPolicy.Attempts = 0
	g.Disconnect.Replace = false
	g.Migrate.MaxParallel = 0
	Canonicalize(job)

	body, err := EncodeJSON(job)
	require.NoError(t, err)
	back, err := ParseJSON(body)
	require.NoError(t, err)
	Canonicalize(back)
	require.True(t, proto.Equal(job, back), "want %v\ngot  %v", job, back)
}

// TestEncodeJSONKeepsLargeIntegersExact: a SubmitTime in unix nanoseconds
// and indexes above 2^53 (more than a float64 holds) come back from
// ParseJSON digit for digit.
func TestEncodeJSONKeepsLargeIntegersExact(t *testing.T) {
	src, err := os.ReadFile("testdata/full.hcl")
	require.NoError(t, err)
	job, err := Parse("full.hcl", src)
	require.NoError(t, err)
	Canonicalize(job)
	job.SubmitTime = 1<<53 + 1
	job.JobModifyIndex = 1<<60 + 3
	job.ModifyIndex = 1<<64 - 1

	body, err := EncodeJSON(job)
	require.NoError(t, err)
	require.Contains(t, string(body), `"SubmitTime":9007199254740993`)
	back, err := ParseJSON(body)
	require.NoError(t, err)
	require.Equal(t, int64(1<<53+1), back.SubmitTime)
	require.Equal(t, uint64(1<<60+3), back.JobModifyIndex)
	require.Equal(t, uint64(1<<64-1), back.ModifyIndex)
	Canonicalize(back)
	require.True(t, proto.Equal(job, back), "want %v\ngot  %v", job, back)
}

// TestEncodeJSONLeavesUnsetAffinityWeightOut: a job built in code with an
// affinity that leaves Weight at 0 (unset) goes through EncodeJSON and
// ParseJSON, which refuses an explicit 0, and gets the default 50.
func TestEncodeJSONLeavesUnsetAffinityWeightOut(t *testing.T) {
	job := &messages.Job{ID: "web", Affinities: []*messages.Affinity{{LTarget: "${meta.rack}", RTarget: "r1"}},
		TaskGroups: []*messages.TaskGroup{{Name: "g", Count: 1, Tasks: []*messages.Task{{Name: "t", Driver: "exec"}}}}}
	body, err := EncodeJSON(job)
	require.NoError(t, err)
	back, err := ParseJSON(body)
	require.NoError(t, err)
	Canonicalize(back)
	require.EqualValues(t, 50, back.Affinities[0].Weight)
}
