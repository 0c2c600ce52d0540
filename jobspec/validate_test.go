package jobspec

import (
	"errors"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
	"github.com/troupe-dev/troupe/messages"
)

func validJob(t *testing.T) *messages.Job {
	t.Helper()
	job := canonicalJob(t, "", "volume \"data\" {\n type = \"csi\"\n source = \"v\"\n access_mode = \"single-node-writer\"\n attachment_mode = \"file-system\"\n}\n network {\n port \"http\" {}\n }",
		"volume_mount {\n volume = \"data\"\n destination = \"/data\"\n}")
	require.NoError(t, Validate(job))
	return job
}

func TestValidateRules(t *testing.T) {
	g := func(j *messages.Job) *messages.TaskGroup { return j.TaskGroups[0] }
	tk := func(j *messages.Job) *messages.Task { return j.TaskGroups[0].Tasks[0] }
	con := func(op, l, r string) []*messages.Constraint {
		return []*messages.Constraint{{Operand: op, LTarget: l, RTarget: r}}
	}
	cases := []struct {
		name   string
		mutate func(*messages.Job)
		want   string
	}{
		{"empty id", func(j *messages.Job) { j.ID = "" }, "id must not be empty"},
		{"space in id", func(j *messages.Job) { j.ID = "a b" }, `id "a b" must not contain spaces`},
		{"nul in id", func(j *messages.Job) { j.ID = "a\x00b" }, "id must not contain a NUL"},
		{"long id", func(j *messages.Job) { j.ID = strings.Repeat("x", 129) }, "id must be at most 128 characters"},
		{"empty name", func(j *messages.Job) { j.Name = "" }, "name must not be empty"},
		{"type", func(j *messages.Job) { j.Type = "web" }, `type "web" is not one of service, batch, system`},
		{"priority low", func(j *messages.Job) { j.Priority = 0 }, "priority 0 must be between 1 and 100"},
		{"priority high", func(j *messages.Job) { j.Priority = 101 }, "priority 101 must be between 1 and 100"},
		{"no datacenter", func(j *messages.Job) { j.Datacenters = nil }, "datacenters must list at least one"},
		{"no group", func(j *messages.Job) { j.TaskGroups = nil }, "job must have at least one group"},
		{"group name", func(j *messages.Job) { g(j).Name = "" }, "group[0]: name must not be empty"},
		{"group unique", func(j *messages.Job) { j.TaskGroups = append(j.TaskGroups, g(j)) }, `group "g": group name is not unique`},
		{"negative count", func(j *messages.Job) { g(j).Count = -1 }, `group "g": count -1 must not be negative`},
		{"system count", func(j *messages.Job) { j.Type = "system"; g(j).ReschedulePolicy = nil; g(j).Count = 2 }, `group "g": count 2: system jobs`},
		{"system reschedule", func(j *messages.Job) { j.Type = "system" }, `group "g": reschedule: system jobs are not rescheduled`},
		{"no task", func(j *messages.Job) { g(j).Tasks = nil }, `group "g": group must have at least one task`},
		{"task unique", func(j *messages.Job) { g(j).Tasks = append(g(j).Tasks, tk(j)) }, `group "g": task "t": task name is not unique`},
		{"task name", func(j *messages.Job) { tk(j).Name = "" }, `group "g": task[0]: name must not be empty`},
		{"driver", func(j *messages.Job) { tk(j).Driver = "docker" }, `group "g": task "t": driver: unknown driver "docker"`},
		{"exec command", func(j *messages.Job) { tk(j).Config = nil }, `group "g": task "t": config.command must be set`},
		{"raw_exec command", func(j *messages.Job) { tk(j).Driver, tk(j).Config = "raw_exec", nil },
			`group "g": task "t": config.command must be set to a non-empty string for the raw_exec driver`},
		{"cpu", func(j *messages.Job) { tk(j).Resources.CPU = 0 }, `group "g": task "t": resources.cpu must be greater than 0`},
		{"memory", func(j *messages.Job) { tk(j).Resources.MemoryMB = 0 }, `group "g": task "t": resources.memory must be greater than 0`},
		{"memory max", func(j *messages.Job) { tk(j).Resources.MemoryMaxMB = 10 }, `group "g": task "t": resources.memory_max (10) must be 0 or at least resources.memory (300)`},
		{"no resources", func(j *messages.Job) { tk(j).Resources = nil }, `group "g": task "t": resources must be set`},
		{"unknown operand", func(j *messages.Job) { j.Constraints = con("~", "${attr.a}", "b") }, `constraint[0]: unknown operator "~"`},
		{"regexp", func(j *messages.Job) { g(j).Constraints = con("regexp", "${attr.a}", "(") }, `group "g": constraint[0]: regexp "(" does not compile`},
		{"version", func(j *messages.Job) { tk(j).Constraints = con("version", "${attr.a}", "~~1") }, `group "g": task "t": constraint[0]: version constraint "~~1" is invalid`},
		{"semver", func(j *messages.Job) { j.Constraints = con("semver", "${attr.a}", "one") }, `constraint[0]: semver constraint "one" is invalid`},
		{"set_contains", func(j *messages.Job) { j.Constraints = con("set_contains_any", "${attr.a}", "") }, `constraint[0]: operator "set_contains_any" requires a value`},
		{"comparison", func(j *messages.Job) { j.Constraints = con(">=", "${attr.a}", "") }, `constraint[0]: operator ">=" requires a value`},
		{"is_set", func(j *messages.Job) { j.Constraints = con("is_set", "${attr.a}", "x") }, `constraint[0]: operator "is_set" does not take a value`},
		{"ltarget", func(j *messages.Job) { j.Constraints = con("=", "", "x") }, `constraint[0]: attribute must be set for operator "="`},
		{"distinct_property", func(j *messages.Job) { j.Constraints = con("distinct_property", "${meta.rack}", "0") }, `constraint[0]: distinct_property limit "0"`},
		{"restart mode", func(j *messages.Job) { g(j).RestartPolicy.Mode = "never" }, `group "g": restart: mode "never" must be "fail" or "delay"`},
		{"restart attempts", func(j *messages.Job) { tk(j).RestartPolicy.Attempts = -1 }, `group "g": task "t": restart: attempts must not be negative`},
		{"restart interval", func(j *messages.Job) { g(j).RestartPolicy.Interval = -1 }, `group "g": restart: interval must not be negative`},
		{"restart delay", func(j *messages.Job) { g(j).RestartPolicy.Delay = -1 }, `group "g": restart: delay must not be negative`},
		{"restart fit", func(j *messages.Job) { g(j).RestartPolicy.Attempts = 1000 }, `group "g": restart: 1000 attempts with a delay of 15s do not fit in an interval of 30m0s`},
		{"delay function", func(j *messages.Job) { g(j).ReschedulePolicy.DelayFunction = "linear" }, `group "g": reschedule: delay_function "linear" must be one of constant, exponential, fibonacci`},
		{"max delay", func(j *messages.Job) { g(j).ReschedulePolicy.MaxDelay = 1 }, `group "g": reschedule: max_delay 1ns must not be less than delay 30s`},
		{"health check", func(j *messages.Job) { g(j).Migrate.HealthCheck = "none" }, `group "g": migrate: health_check "none"`},
		{"reconcile", func(j *messages.Job) { g(j).Disconnect = &messages.DisconnectStrategy{Reconcile: "random"} }, `group "g": disconnect: reconcile "random"`},
		{"network mode", func(j *messages.Job) { g(j).Networks[0].Mode = "overlay" }, `group "g": network[0]: mode "overlay"`},
		{"port label", func(j *messages.Job) {
			n := g(j).Networks[0]
			n.ReservedPorts = []*messages.Port{{Label: "http", Value: 80}}
		}, `group "g": network[0]: port "http": label is not unique`},
		{"port range", func(j *messages.Job) { g(j).Networks[0].DynamicPorts[0].Value = 70000 }, `group "g": network[0]: port "http": static 70000`},
		{"volume type", func(j *messages.Job) { g(j).Volumes["data"].Type = "nfs" }, `group "g": volume "data": type "nfs"`},
		{"volume source", func(j *messages.Job) { g(j).Volumes["data"].Source = "" }, `group "g": volume "data": source must not be empty`},
		{"access mode", func(j *messages.Job) { g(j).Volumes["data"].AccessMode = "rw" }, `group "g": volume "data": access_mode "rw"`},
		{"volume mount", func(j *messages.Job) { tk(j).VolumeMounts[0].Volume = "other" }, `group "g": task "t": volume_mount[0]: volume "other" is not defined`},
		{"logs", func(j *messages.Job) { tk(j).LogConfig.MaxFiles = 0 }, `group "g": task "t": logs.max_files must be at least 1`},
		{"device count", func(j *messages.Job) {
			tk(j).Resources.Devices = []*messages.RequestedDevice{{Name: "nvidia/gpu"}}
		}, `group "g": task "t": resources.device "nvidia/gpu": count must be at least 1`},
		{"device constraint", func(j *messages.Job) {
			tk(j).Resources.Devices = []*messages.RequestedDevice{{Name: "nvidia/gpu", Count: 1, Constraints: con("regexp", "${device.model}", "[")}}
		}, `group "g": task "t": resources.device "nvidia/gpu": constraint[0]: regexp "["`},
		{"affinity weight", func(j *messages.Job) {
			tk(j).Resources.Devices = []*messages.RequestedDevice{{Name: "nvidia/gpu", Count: 1,
				Affinities: []*messages.Affinity{{LTarget: "${device.model}", RTarget: "H200", Operand: "=", Weight: 101}}}}
		}, `group "g": task "t": resources.device "nvidia/gpu": affinity[0]: weight 101`},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) { requireInvalid(t, tc.mutate, tc.want) })
	}
}

// requireInvalid changes a valid job with mutate and requires Validate to
// refuse it with a problem starting with want.
func requireInvalid(t *testing.T, mutate func(*messages.Job), want string) {
	t.Helper()
	job := validJob(t)
	mutate(job)
	err := Validate(job)
	require.Error(t, err)
	require.True(t, errors.Is(err, ErrInvalid))
	var ve *ValidationError
	require.ErrorAs(t, err, &ve)
	require.True(t, hasPrefixed(ve.Problems, want), "want a problem starting %q, got:\n%s", want, err)
}

// hasPrefixed reports whether one problem starts with want.
func hasPrefixed(problems []string, want string) bool {
	for _, p := range problems {
		if strings.HasPrefix(p, want) {
			return true
		}
	}
	return false
}

func TestValidateCollectsEveryProblem(t *testing.T) {
	job := validJob(t)
	job.Priority = 0
	job.TaskGroups[0].Tasks[0].Driver = "x"
	job.TaskGroups[0].Tasks[0].Resources.MemoryMB = 0
	err := Validate(job)
	require.Error(t, err)
	var ve *ValidationError
	require.ErrorAs(t, err, &ve)
	require.Equal(t, []string{
		"priority 0 must be between 1 and 100",
		`group "g": task "t": driver: unknown driver "x" (known: exec, raw_exec, containerd, qemu, java)`,
		`group "g": task "t": resources.memory must be greater than 0`,
	}, ve.Problems)
	require.Equal(t, strings.Join(ve.Problems, "\n"), err.Error())
}

func TestValidateAcceptsEveryKnownOperand(t *testing.T) {
	ops := map[string]string{"=": "a", "==": "a", "is": "a", "!=": "a", "not": "a", "<": "1", "<=": "1",
		">": "1", ">=": "1", "regexp": "^a", "version": ">= 1.2, < 2", "semver": "~> 1.2",
		"set_contains": "a", "set_contains_all": "a,b", "set_contains_any": "a", "distinct_hosts": "",
		"distinct_property": "2", "is_set": "", "is_not_set": ""}
	for op, r := range ops {
		t.Run(op, func(t *testing.T) {
			job := validJob(t)
			job.Constraints = []*messages.Constraint{{Operand: op, LTarget: "${attr.a}", RTarget: r}}
			require.NoError(t, Validate(job))
		})
	}
}

func TestValidateNil(t *testing.T) {
	require.ErrorIs(t, Validate(nil), ErrInvalid)
}
