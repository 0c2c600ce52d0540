package jobspec

import (
	"testing"

	"github.com/stretchr/testify/require"
	"google.golang.org/protobuf/types/known/structpb"

	"github.com/troupe-dev/troupe/messages"
)

const lifecycleHCL = `
job "web" {
  type = "batch"
  group "g" {
    task "init" {
      driver = "exec"
      config { command = "/bin/true" }
      lifecycle { hook = "prestart" }
    }
    task "proxy" {
      driver = "exec"
      config { command = "/bin/true" }
      lifecycle {
        hook    = "prestart"
        sidecar = true
      }
    }
    task "main" {
      driver = "exec"
      leader = true
      config { command = "/bin/true" }
    }
    task "cleanup" {
      driver = "exec"
      config { command = "/bin/true" }
      lifecycle { hook = "poststop" }
    }
  }
}
`

func TestLifecycleHCL(t *testing.T) {
	job, err := Parse("web.hcl", []byte(lifecycleHCL))
	require.NoError(t, err)
	Canonicalize(job)
	require.NoError(t, Validate(job))
	tasks := job.TaskGroups[0].Tasks
	requireLifecycle(t, &messages.TaskLifecycle{Hook: HookPrestart}, tasks[0].Lifecycle)
	requireLifecycle(t, &messages.TaskLifecycle{Hook: HookPrestart, Sidecar: true}, tasks[1].Lifecycle)
	require.Nil(t, tasks[2].Lifecycle)
	require.True(t, tasks[2].Leader)
	requireLifecycle(t, &messages.TaskLifecycle{Hook: HookPoststop}, tasks[3].Lifecycle)
}

func TestLifecycleJSON(t *testing.T) {
	job, err := ParseJSON([]byte(`{"Job": {"ID": "j", "Type": "batch", "TaskGroups": [{"Name": "g", "Tasks": [
		{"Name": "side", "Driver": "exec", "Config": {"command": "/bin/true"}, "Lifecycle": {"Hook": "poststart", "Sidecar": true}},
		{"Name": "main", "Driver": "exec", "Config": {"command": "/bin/true"}, "Lifecycle": {"Hook": "", "Sidecar": false}}]}]}}`))
	require.NoError(t, err)
	Canonicalize(job)
	require.NoError(t, Validate(job))
	requireLifecycle(t, &messages.TaskLifecycle{Hook: HookPoststart, Sidecar: true}, job.TaskGroups[0].Tasks[0].Lifecycle)
	require.Nil(t, job.TaskGroups[0].Tasks[1].Lifecycle, "an all-zero lifecycle is a main task's")
}

func TestLifecycleValidation(t *testing.T) {
	cfg, err := structpb.NewStruct(map[string]any{"command": "/bin/true"})
	require.NoError(t, err)
	task := func(name string, lc *messages.TaskLifecycle, leader bool) *messages.Task {
		return &messages.Task{Name: name, Driver: "exec", Leader: leader, Lifecycle: lc,
			Config: cfg}
	}
	cases := []struct {
		name  string
		tasks []*messages.Task
		want  string
	}{
		{"no hook", []*messages.Task{task("a", &messages.TaskLifecycle{Sidecar: true}, false), task("m", nil, false)},
			`no lifecycle hook provided`},
		{"bad hook", []*messages.Task{task("a", &messages.TaskLifecycle{Hook: "prerun"}, false), task("m", nil, false)},
			`invalid hook "prerun"`},
		{"no main task", []*messages.Task{task("a", &messages.TaskLifecycle{Hook: HookPrestart}, false)},
			`missing main task`},
		{"two leaders", []*messages.Task{task("a", nil, true), task("b", nil, true)},
			`only one task may be marked as leader`},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			job := &messages.Job{ID: "j", Name: "j", Type: "batch", Datacenters: []string{"dc1"},
				TaskGroups: []*messages.TaskGroup{{Name: "g", Count: 1, Tasks: tc.tasks}}}
			Canonicalize(job)
			err := Validate(job)
			require.ErrorContains(t, err, tc.want)
		})
	}
	job, err := Parse("x.hcl", []byte(`job "x" {
  group "g" {
    task "t" {
      driver = "exec"
      config { command = "/bin/true" }
      lifecycle { sidecar = true }
    }
  }
}`))
	require.NoError(t, err)
	Canonicalize(job)
	require.ErrorContains(t, Validate(job), "no lifecycle hook provided")
}

func requireLifecycle(t *testing.T, want, got *messages.TaskLifecycle) {
	t.Helper()
	require.NotNil(t, got)
	require.Equal(t, want.GetHook(), got.GetHook())
	require.Equal(t, want.GetSidecar(), got.GetSidecar())
}
