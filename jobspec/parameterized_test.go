package jobspec

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/troupe-dev/troupe/messages"
)

const parameterizedHCL = `
job "render" {
  type = "batch"
  parameterized {
    payload       = "required"
    meta_required = ["scene"]
    meta_optional = ["quality"]
  }
  group "g" {
    task "t" {
      driver = "exec"
      config { command = "/bin/true" }
      dispatch_payload {
        file = "input/scene.json"
      }
    }
  }
}
`

func TestParameterizedHCL(t *testing.T) {
	job, err := Parse("render.hcl", []byte(parameterizedHCL))
	require.NoError(t, err)
	Canonicalize(job)
	require.NoError(t, Validate(job))
	p := job.GetParameterizedJob()
	require.Equal(t, DispatchPayloadRequired, p.Payload)
	require.Equal(t, []string{"scene"}, p.MetaRequired)
	require.Equal(t, []string{"quality"}, p.MetaOptional)
	require.True(t, job.IsParameterized())
	require.True(t, job.IsParent())
	require.Equal(t, "input/scene.json", job.TaskGroups[0].Tasks[0].GetDispatchPayload().GetFile())

	empty, err := Parse("e.hcl", []byte(`job "x" {
  type = "batch"
  parameterized {}
  group "g" {
    task "t" {
      driver = "exec"
      config { command = "/bin/true" }
    }
  }
}`))
	require.NoError(t, err)
	Canonicalize(empty)
	require.Equal(t, DispatchPayloadOptional, empty.ParameterizedJob.Payload, "Nomad's default")
}

func TestParameterizedJSON(t *testing.T) {
	job, err := ParseJSON([]byte(`{"Job":{"ID":"r","Type":"batch","ParameterizedJob":{"MetaRequired":["a"]},
		"TaskGroups":[{"Name":"g","Tasks":[{"Name":"t","Driver":"exec","Config":{"command":"/bin/true"},
		"DispatchPayload":{"File":"in.txt"}}]}]}}`))
	require.NoError(t, err)
	Canonicalize(job)
	require.NoError(t, Validate(job))
	require.Equal(t, DispatchPayloadOptional, job.ParameterizedJob.Payload)
	require.Equal(t, []string{"a"}, job.ParameterizedJob.MetaRequired)
	require.Equal(t, "in.txt", job.TaskGroups[0].Tasks[0].DispatchPayload.File)

	// A dispatched child is no parent: its children would be nobody's.
	child := &messages.Job{ParameterizedJob: job.ParameterizedJob, Dispatched: true}
	require.False(t, child.IsParameterized())
	require.False(t, child.IsParent())
}

func TestParameterizedValidation(t *testing.T) {
	for _, tc := range []struct {
		name string
		typ  string
		p    *messages.ParameterizedJobConfig
		dp   *messages.DispatchPayloadConfig
		per  *messages.PeriodicConfig
		want string
	}{
		{"service job", TypeService, &messages.ParameterizedJobConfig{}, nil, nil,
			`parameterized: can only be used with "batch" jobs, not "service"`},
		{"bad payload", TypeBatch, &messages.ParameterizedJobConfig{Payload: "sometimes"}, nil, nil,
			`parameterized: payload "sometimes" must be one of "optional", "required" or "forbidden"`},
		{"both lists", TypeBatch, &messages.ParameterizedJobConfig{MetaRequired: []string{"k"}, MetaOptional: []string{"k"}}, nil, nil,
			`parameterized: meta key "k" is both required and optional`},
		{"empty key", TypeBatch, &messages.ParameterizedJobConfig{MetaOptional: []string{""}}, nil, nil,
			`parameterized: meta_optional has an empty key`},
		{"also periodic", TypeBatch, &messages.ParameterizedJobConfig{}, nil,
			&messages.PeriodicConfig{Enabled: true, Specs: []string{"@daily"}},
			`parameterized: a job can not be both periodic and parameterized`},
		{"payload escapes", TypeBatch, &messages.ParameterizedJobConfig{}, &messages.DispatchPayloadConfig{File: "../../etc/x"}, nil,
			`group "g": task "t": dispatch_payload: file "../../etc/x" must name a file inside the task's local directory`},
		{"payload is local itself", TypeBatch, &messages.ParameterizedJobConfig{}, &messages.DispatchPayloadConfig{File: "/"}, nil,
			`dispatch_payload: file "/" must name a file inside the task's local directory`},
		{"payload without file", TypeBatch, &messages.ParameterizedJobConfig{}, &messages.DispatchPayloadConfig{}, nil,
			`dispatch_payload: file must be set`},
		{"payload newline", TypeBatch, &messages.ParameterizedJobConfig{}, &messages.DispatchPayloadConfig{File: "a\nb"}, nil,
			`dispatch_payload: file must not contain control characters`},
		{"payload not parameterized", TypeBatch, nil, &messages.DispatchPayloadConfig{File: "in"}, nil,
			`dispatch_payload: can only be used in a parameterized job`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			job := &messages.Job{ID: "r", Type: tc.typ, ParameterizedJob: tc.p, Periodic: tc.per,
				TaskGroups: []*messages.TaskGroup{{Name: "g",
					Tasks: []*messages.Task{{Name: "t", Driver: "exec", DispatchPayload: tc.dp}}}}}
			Canonicalize(job)
			err := Validate(job)
			require.Error(t, err)
			require.Contains(t, err.Error(), tc.want)
		})
	}
}
