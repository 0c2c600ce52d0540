package jobspec

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"github.com/troupe-dev/troupe/messages"
	"google.golang.org/protobuf/proto"
)

// hclJob renders a one-group, one-exec-task job with extra text in each
// level; canonicalJob parses and canonicalizes it.
func hclJob(jobExtra, groupExtra, taskExtra string) string {
	return `job "j" {
` + jobExtra + `
  group "g" {
` + groupExtra + `
    task "t" {
      driver = "exec"
      config {
        command = "/bin/true"
      }
` + taskExtra + `
    }
  }
}
`
}

func canonicalJob(t *testing.T, jobExtra, groupExtra, taskExtra string) *messages.Job {
	t.Helper()
	job := parseHCL(t, hclJob(jobExtra, groupExtra, taskExtra))
	Canonicalize(job)
	return job
}

var (
	serviceRestart = &messages.RestartPolicy{Attempts: 2, Interval: ns(30 * time.Minute), Delay: ns(15 * time.Second), Mode: "fail"}
	batchRestart   = &messages.RestartPolicy{Attempts: 3, Interval: ns(24 * time.Hour), Delay: ns(15 * time.Second), Mode: "fail"}
)

func TestCanonicalizeDefaults(t *testing.T) {
	grp := func(j *messages.Job) *messages.TaskGroup { return j.TaskGroups[0] }
	tsk := func(j *messages.Job) *messages.Task { return j.TaskGroups[0].Tasks[0] }
	cases := []struct {
		name                string
		jobX, groupX, taskX string
		got                 func(*messages.Job) any
		want                any
	}{
		{"namespace", "", "", "", func(j *messages.Job) any { return j.Namespace }, "default"},
		{"region", "", "", "", func(j *messages.Job) any { return j.Region }, "global"},
		{"datacenters", "", "", "", func(j *messages.Job) any { return j.Datacenters }, []string{"*"}},
		{"type", "", "", "", func(j *messages.Job) any { return j.Type }, "service"},
		{"priority", "", "", "", func(j *messages.Job) any { return j.Priority }, int32(50)},
		{"name from id", "", "", "", func(j *messages.Job) any { return j.Name }, "j"},
		{"explicit name kept", `name = "other"`, "", "", func(j *messages.Job) any { return j.Name }, "other"},
		{"count absent", "", "", "", func(j *messages.Job) any { return grp(j).Count }, int32(1)},
		{"count zero kept", "", "count = 0", "", func(j *messages.Job) any { return grp(j).Count }, int32(0)},
		{"service restart", "", "", "", func(j *messages.Job) any { return grp(j).RestartPolicy }, serviceRestart},
		{"system restart", `type = "system"`, "", "", func(j *messages.Job) any { return grp(j).RestartPolicy }, serviceRestart},
		{"batch restart", `type = "batch"`, "", "", func(j *messages.Job) any { return grp(j).RestartPolicy }, batchRestart},
		{"partial group restart", `type = "batch"`, `restart { mode = "delay" }`, "",
			func(j *messages.Job) any { return grp(j).RestartPolicy },
			&messages.RestartPolicy{Attempts: 3, Interval: ns(24 * time.Hour), Delay: ns(15 * time.Second), Mode: "delay"}},
		{"explicit zero attempts kept", "", `restart { attempts = 0 }`, "",
			func(j *messages.Job) any { return grp(j).RestartPolicy.Attempts }, int32(0)},
		{"task inherits group restart", "", "restart {\n attempts = 7\n interval = \"1h\"\n}", "",
			func(j *messages.Job) any { return tsk(j).RestartPolicy },
			&messages.RestartPolicy{Attempts: 7, Interval: ns(time.Hour), Delay: ns(15 * time.Second), Mode: "fail"}},
		{"partial task restart over group", "", `restart { attempts = 7 }`, `restart { delay = "1s" }`,
			func(j *messages.Job) any { return tsk(j).RestartPolicy },
			&messages.RestartPolicy{Attempts: 7, Interval: ns(30 * time.Minute), Delay: ns(time.Second), Mode: "fail"}},
		{"service reschedule", "", "", "", func(j *messages.Job) any { return grp(j).ReschedulePolicy },
			&messages.ReschedulePolicy{Delay: ns(30 * time.Second), DelayFunction: "exponential", MaxDelay: ns(time.Hour), Unlimited: true}},
		{"batch reschedule", `type = "batch"`, "", "", func(j *messages.Job) any { return grp(j).ReschedulePolicy },
			&messages.ReschedulePolicy{Attempts: 1, Interval: ns(24 * time.Hour), Delay: ns(5 * time.Second), DelayFunction: "constant"}},
		{"system reschedule", `type = "system"`, "", "", func(j *messages.Job) any { return grp(j).ReschedulePolicy },
			(*messages.ReschedulePolicy)(nil)},
		{"partial reschedule", "", "reschedule {\n unlimited = false\n attempts = 2\n}", "",
			func(j *messages.Job) any { return grp(j).ReschedulePolicy },
			&messages.ReschedulePolicy{Attempts: 2, Delay: ns(30 * time.Second), DelayFunction: "exponential", MaxDelay: ns(time.Hour)}},
		{"service migrate", "", "", "", func(j *messages.Job) any { return grp(j).Migrate },
			&messages.MigrateStrategy{MaxParallel: 1, HealthCheck: "checks", MinHealthyTime: ns(10 * time.Second), HealthyDeadline: ns(5 * time.Minute)}},
		{"batch migrate", `type = "batch"`, "", "", func(j *messages.Job) any { return grp(j).Migrate },
			(*messages.MigrateStrategy)(nil)},
		{"partial migrate", "", `migrate { max_parallel = 3 }`, "", func(j *messages.Job) any { return grp(j).Migrate },
			&messages.MigrateStrategy{MaxParallel: 3, HealthCheck: "checks", MinHealthyTime: ns(10 * time.Second), HealthyDeadline: ns(5 * time.Minute)}},
		{"disconnect", "", `disconnect { lost_after = "1h" }`, "", func(j *messages.Job) any { return grp(j).Disconnect },
			&messages.DisconnectStrategy{LostAfter: ns(time.Hour), Replace: true, Reconcile: "best_score"}},
		{"kill timeout", "", "", "", func(j *messages.Job) any { return tsk(j).KillTimeout }, ns(5 * time.Second)},
		{"resources absent", "", "", "", func(j *messages.Job) any { return tsk(j).Resources },
			&messages.Resources{CPU: 100, MemoryMB: 300}},
		{"resources partial", "", "", `resources { memory = 64 }`, func(j *messages.Job) any { return tsk(j).Resources },
			&messages.Resources{CPU: 100, MemoryMB: 64}},
		{"job constraint operand", "constraint {\n attribute = \"${attr.a}\"\n value = \"1\"\n}", "", "",
			func(j *messages.Job) any { return j.Constraints[0].Operand }, "="},
		{"group constraint operand", "", "constraint {\n attribute = \"${attr.a}\"\n value = \"1\"\n}", "",
			func(j *messages.Job) any { return grp(j).Constraints[0].Operand }, "="},
		{"task constraint operand", "", "", "constraint {\n attribute = \"${attr.a}\"\n value = \"1\"\n}",
			func(j *messages.Job) any { return tsk(j).Constraints[0].Operand }, "="},
		{"network mode", "", "network {\n port \"http\" {}\n}", "", func(j *messages.Job) any { return grp(j).Networks[0].Mode }, "host"},
		{"log config", "", "", "", func(j *messages.Job) any { return tsk(j).LogConfig },
			&messages.LogConfig{MaxFiles: 10, MaxFileSizeMB: 10}},
		{"device defaults", "", "", "resources {\n device \"nvidia/gpu\" {\n affinity {\n attribute = \"${device.model}\"\n value = \"H200\"\n }\n }\n}",
			func(j *messages.Job) any { return tsk(j).Resources.Devices[0] },
			&messages.RequestedDevice{Name: "nvidia/gpu", Count: 1,
				Affinities: []*messages.Affinity{{LTarget: "${device.model}", RTarget: "H200", Operand: "=", Weight: 50}}}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			job := canonicalJob(t, tc.jobX, tc.groupX, tc.taskX)
			got := tc.got(job)
			if want, ok := tc.want.(proto.Message); ok {
				gotMsg, _ := got.(proto.Message)
				requireProto(t, want, gotMsg)
				return
			}
			require.Equal(t, tc.want, got)
		})
	}
}

func TestCanonicalizeIsIdempotentAndKeepsSetValues(t *testing.T) {
	job := canonicalJob(t, "namespace = \"ns\"\n region = \"eu\"\n datacenters = [\"a\"]\n priority = 9", "", "kill_timeout = \"1m\"")
	once := proto.Clone(job).(*messages.Job)
	Canonicalize(job)
	requireProto(t, once, job)
	require.Equal(t, "ns", job.Namespace)
	require.Equal(t, "eu", job.Region)
	require.Equal(t, []string{"a"}, job.Datacenters)
	require.EqualValues(t, 9, job.Priority)
	require.Equal(t, ns(time.Minute), job.TaskGroups[0].Tasks[0].KillTimeout)
}

func TestCanonicalizeBuiltJob(t *testing.T) {
	job := &messages.Job{ID: "x", TaskGroups: []*messages.TaskGroup{{Name: "g", Count: 1,
		Tasks: []*messages.Task{{Name: "t", Driver: "raw_exec"}}}}}
	Canonicalize(job)
	task := job.TaskGroups[0].Tasks[0]
	requireProto(t, serviceRestart, task.RestartPolicy)
	require.NotSame(t, job.TaskGroups[0].RestartPolicy, task.RestartPolicy, "task must get its own copy")
	Canonicalize(nil) // must not panic
}
