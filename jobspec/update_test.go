package jobspec

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/troupe-dev/troupe/messages"
)

const updateHCL = `
job "web" {
  update {
    max_parallel     = 2
    min_healthy_time = "1s"
    auto_revert      = true
  }
  group "inherits" {
    task "t" {
      driver = "exec"
      config { command = "/bin/true" }
    }
  }
  group "overrides" {
    update {
      canary       = 1
      auto_promote = true
      health_check = "task_states"
    }
    task "t" {
      driver = "exec"
      config { command = "/bin/true" }
    }
  }
  group "off" {
    update { max_parallel = 0 }
    task "t" {
      driver = "exec"
      config { command = "/bin/true" }
    }
  }
}
`

func TestUpdateHCLMergesJobIntoGroups(t *testing.T) {
	job, err := Parse("web.hcl", []byte(updateHCL))
	require.NoError(t, err)
	Canonicalize(job)
	require.NoError(t, Validate(job))
	want := DefaultUpdate()
	want.MaxParallel, want.MinHealthyTime, want.AutoRevert = 2, int64(time.Second), true
	require.Equal(t, want.String(), job.Update.String())
	require.Equal(t, want.String(), job.TaskGroups[0].Update.String())
	over := job.TaskGroups[1].Update
	require.EqualValues(t, 2, over.MaxParallel, "inherited from the job")
	require.EqualValues(t, 1, over.Canary)
	require.True(t, over.AutoPromote)
	require.True(t, over.AutoRevert)
	require.Equal(t, messages.HealthCheckTaskStates, over.HealthCheck)
	require.Equal(t, int64(time.Second), over.MinHealthyTime)
	require.Equal(t, int64(10*time.Minute), over.ProgressDeadline, "Nomad's default")
	require.Nil(t, job.TaskGroups[2].Update, "max_parallel = 0 turns deployments off")
}

func TestUpdateJSONDefaults(t *testing.T) {
	job, err := ParseJSON([]byte(`{"Job": {"ID": "j", "TaskGroups": [{"Name": "g",
		"Update": {"MaxParallel": 3, "Canary": 2},
		"Tasks": [{"Name": "t", "Driver": "exec", "Config": {"command": "/bin/true"}}]}]}}`))
	require.NoError(t, err)
	Canonicalize(job)
	require.NoError(t, Validate(job))
	u := job.TaskGroups[0].Update
	require.EqualValues(t, 3, u.MaxParallel)
	require.EqualValues(t, 2, u.Canary)
	require.Equal(t, messages.HealthCheckChecks, u.HealthCheck)
	require.Equal(t, int64(5*time.Minute), u.HealthyDeadline)
	require.Equal(t, int64(30*time.Second), u.Stagger)
	require.Nil(t, job.Update)
}

func TestUpdateNotWithoutBlock(t *testing.T) {
	job, err := ParseJSON([]byte(`{"Job": {"ID": "j", "TaskGroups": [{"Name": "g",
		"Tasks": [{"Name": "t", "Driver": "exec", "Config": {"command": "/bin/true"}}]}]}}`))
	require.NoError(t, err)
	Canonicalize(job)
	require.Nil(t, job.TaskGroups[0].Update)
}

func TestUpdateValidation(t *testing.T) {
	for _, tc := range []struct {
		name, block, typ, want string
	}{
		{"bad check", `health_check = "http"`, "service", `health_check "http" must be`},
		{"negative canary", `canary = -1`, "service", "canary must not be negative"},
		{"auto promote without canary", `auto_promote = true`, "service", "auto_promote requires a canary"},
		{"min healthy over deadline", `min_healthy_time = "10m"`, "service", "min_healthy_time must be less than healthy_deadline"},
		{"deadline over progress", `healthy_deadline = "20m"`, "service", "healthy_deadline must be less than progress_deadline"},
		{"batch", `max_parallel = 1`, "batch", `job type "batch" does not allow update block`},
		{"system canary", `canary = 1`, "system", "system jobs do not support canaries"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			src := `job "j" {
  type = "` + tc.typ + `"
  group "g" {
    update {
      ` + tc.block + `
    }
    task "t" {
      driver = "exec"
      config { command = "/bin/true" }
    }
  }
}`
			job, err := Parse("j.hcl", []byte(src))
			require.NoError(t, err)
			Canonicalize(job)
			err = Validate(job)
			require.Error(t, err)
			require.Contains(t, err.Error(), tc.want)
		})
	}
}
