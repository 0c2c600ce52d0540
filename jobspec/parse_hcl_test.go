package jobspec

import (
	"errors"
	"os"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"github.com/troupe-dev/troupe/messages"
	"google.golang.org/protobuf/proto"
)

func parseHCL(t *testing.T, src string) *messages.Job {
	t.Helper()
	job, err := Parse("test.hcl", []byte(src))
	require.NoError(t, err)
	return job
}

func TestParseFullJob(t *testing.T) {
	src, err := os.ReadFile("testdata/full.hcl")
	require.NoError(t, err)
	job, err := Parse("full.hcl", src)
	require.NoError(t, err)

	require.Equal(t, "hello", job.ID)
	require.Equal(t, "prod", job.Namespace)
	require.Equal(t, "eu", job.Region)
	require.Equal(t, []string{"dc1", "dc2"}, job.Datacenters)
	require.Equal(t, "service", job.Type)
	require.EqualValues(t, 70, job.Priority)
	require.Equal(t, map[string]string{"owner": "me"}, job.Meta)
	requireProto(t, &messages.Constraint{LTarget: "${attr.kernel.name}", RTarget: "linux", Operand: "="}, job.Constraints[0])
	requireProto(t, &messages.Constraint{Operand: "distinct_hosts"}, job.Constraints[1])

	g := job.TaskGroups[0]
	require.Equal(t, "web", g.Name)
	require.EqualValues(t, 2, g.Count)
	requireProto(t, &messages.Constraint{LTarget: "${meta.rack}", RTarget: "r1"}, g.Constraints[0])
	requireProto(t, &messages.RestartPolicy{Attempts: 2, Interval: ns(30 * time.Minute), Delay: ns(15 * time.Second), Mode: "fail"}, g.RestartPolicy)
	requireProto(t, &messages.ReschedulePolicy{Attempts: 3, Interval: ns(time.Hour), Delay: ns(10 * time.Second),
		DelayFunction: "exponential", MaxDelay: ns(5 * time.Minute)}, g.ReschedulePolicy)
	requireProto(t, &messages.MigrateStrategy{MaxParallel: 1, HealthCheck: "checks",
		MinHealthyTime: ns(10 * time.Second), HealthyDeadline: ns(5 * time.Minute)}, g.Migrate)
	requireProto(t, &messages.DisconnectStrategy{LostAfter: ns(time.Hour), StopOnClientAfter: ns(30 * time.Second),
		Replace: true, Reconcile: "best_score"}, g.Disconnect)
	require.Equal(t, ns(30*time.Second), g.StopAfterClientDisconnect)
	requireProto(t, &messages.NetworkResource{Mode: "bridge",
		ReservedPorts: []*messages.Port{{Label: "http", Value: 8080, To: 80}},
		DynamicPorts:  []*messages.Port{{Label: "db", To: 5432}}}, g.Networks[0])
	requireProto(t, &messages.VolumeRequest{Name: "data", Type: "csi", Source: "vol1",
		AccessMode: "multi-node-multi-writer", AttachmentMode: "file-system"}, g.Volumes["data"])
	require.Equal(t, map[string]string{"tier": "front"}, g.Meta)

	task := g.Tasks[0]
	require.Equal(t, "server", task.Name)
	require.Equal(t, "exec", task.Driver)
	require.Equal(t, "nobody", task.User)
	require.False(t, task.Leader)
	require.Equal(t, map[string]any{"command": "/bin/sh",
		"args": []any{"-c", "while true; do echo hi; sleep 1; done"}}, task.Config.AsMap())
	require.Equal(t, map[string]string{"GREETING": "hello", "ALLOC": "${NOMAD_ALLOC_ID}"}, task.Env)
	requireProto(t, &messages.Resources{CPU: 200, MemoryMB: 128, MemoryMaxMB: 256,
		Devices: []*messages.RequestedDevice{{Name: "nvidia/gpu", Count: 2,
			Constraints: []*messages.Constraint{{LTarget: "${device.attr.memory_mib}", Operand: ">=", RTarget: "40000"}},
			Affinities:  []*messages.Affinity{{LTarget: "${device.model}", RTarget: "H200", Weight: 50}}}}}, task.Resources)
	requireProto(t, &messages.RestartPolicy{Attempts: 1, Interval: ns(90 * time.Minute), Delay: ns(20 * time.Second), Mode: "delay"}, task.RestartPolicy)
	require.Equal(t, ns(10*time.Second), task.KillTimeout)
	require.Equal(t, "SIGINT", task.KillSignal)
	require.Equal(t, map[string]string{"role": "api"}, task.Meta)
	requireProto(t, &messages.Constraint{LTarget: "${node.unique.name}", Operand: "regexp", RTarget: "^web-"}, task.Constraints[0])
	requireProto(t, &messages.VolumeMount{Volume: "data", Destination: "/data", ReadOnly: true}, task.VolumeMounts[0])
	requireProto(t, &messages.LogConfig{MaxFiles: 5, MaxFileSizeMB: 20}, task.LogConfig)

	Canonicalize(job)
	require.NoError(t, Validate(job))
}

func TestParseInterpolationsPreserved(t *testing.T) {
	cases := map[string]string{
		"attr":          `"${attr.kernel.name}"`,
		"node":          `"${node.unique.name}"`,
		"meta":          `"${meta.rack}"`,
		"meta index":    `"${meta["my-key"]}"`,
		"device":        `"${device.model}"`,
		"nomad env":     `"${NOMAD_ALLOC_ID}"`,
		"troupe env":    `"${TROUPE_TASK_DIR}"`,
		"env":           `"${env.X}"`,
		"in text":       `"pre-${node.unique.name}-${NOMAD_ALLOC_INDEX}.post"`,
		"escaped":       `"$${literal}"`,
		"with spaces":   `"${ attr.kernel.name }"`,
		"heredoc-style": "<<EOT\nrack ${meta.rack}\nEOT\n",
	}
	want := map[string]string{
		"meta index":    `${meta["my-key"]}`,
		"in text":       `pre-${node.unique.name}-${NOMAD_ALLOC_INDEX}.post`,
		"escaped":       `${literal}`,
		"with spaces":   `${attr.kernel.name}`,
		"heredoc-style": "rack ${meta.rack}\n",
	}
	for name, expr := range cases {
		t.Run(name, func(t *testing.T) {
			job := parseHCL(t, `job "j" {
  group "g" {
    task "t" {
      driver = "exec"
      env {
        V = `+expr+`
      }
      config {
        command = "/bin/echo"
        args    = [`+expr+`]
      }
    }
  }
}`)
			expected, ok := want[name]
			if !ok {
				expected = expr[1 : len(expr)-1]
			}
			task := job.TaskGroups[0].Tasks[0]
			require.Equal(t, expected, task.Env["V"])
			require.Equal(t, []any{expected}, task.Config.AsMap()["args"])
		})
	}
}

func TestParseConfigStruct(t *testing.T) {
	job := parseHCL(t, `job "j" {
  group "g" {
    task "t" {
      driver = "containerd"
      config {
        image   = "docker.io/library/redis:7"
        args    = ["--port", 6379, true]
        labels  = { app = "redis", shard = 2 }
        ports   = []
        port_map {
          db = 6379
        }
        mount {
          type   = "bind"
          source = "/a"
        }
        mount {
          type   = "tmpfs"
          target = "/b"
          options {
            size = 64
          }
        }
        logging "syslog" {
          tag = "${NOMAD_TASK_NAME}"
        }
      }
    }
  }
}`)
	require.Equal(t, map[string]any{
		"image":    "docker.io/library/redis:7",
		"args":     []any{"--port", float64(6379), true},
		"labels":   map[string]any{"app": "redis", "shard": float64(2)},
		"ports":    []any{},
		"port_map": map[string]any{"db": float64(6379)},
		"mount": []any{
			map[string]any{"type": "bind", "source": "/a"},
			map[string]any{"type": "tmpfs", "target": "/b", "options": map[string]any{"size": float64(64)}},
		},
		"logging": map[string]any{"syslog": map[string]any{"tag": "${NOMAD_TASK_NAME}"}},
	}, job.TaskGroups[0].Tasks[0].Config.AsMap())
}

func TestParseConstraintShorthands(t *testing.T) {
	cases := []struct {
		body string
		want *messages.Constraint
	}{
		{`distinct_hosts = true`, &messages.Constraint{Operand: "distinct_hosts"}},
		{`distinct_property = "${meta.rack}"`, &messages.Constraint{Operand: "distinct_property", LTarget: "${meta.rack}"}},
		{"attribute = \"${attr.os.version}\"\n version = \">= 1.2\"", &messages.Constraint{Operand: "version", LTarget: "${attr.os.version}", RTarget: ">= 1.2"}},
		{"attribute = \"${attr.os.version}\"\n semver = \"~> 1.2\"", &messages.Constraint{Operand: "semver", LTarget: "${attr.os.version}", RTarget: "~> 1.2"}},
		{"attribute = \"${node.class}\"\n regexp = \"^gpu\"", &messages.Constraint{Operand: "regexp", LTarget: "${node.class}", RTarget: "^gpu"}},
		{"attribute = \"${meta.tags}\"\n set_contains = \"a,b\"", &messages.Constraint{Operand: "set_contains", LTarget: "${meta.tags}", RTarget: "a,b"}},
		{"attribute = \"${meta.x}\"\n operator = \"is_set\"", &messages.Constraint{Operand: "is_set", LTarget: "${meta.x}"}},
	}
	for _, tc := range cases {
		t.Run(tc.body, func(t *testing.T) {
			job := parseHCL(t, "job \"j\" {\n constraint {\n "+tc.body+"\n }\n}\n")
			requireProto(t, tc.want, job.Constraints[0])
		})
	}
}

func TestParseErrorsCarryPosition(t *testing.T) {
	cases := []struct {
		name      string
		src       string
		line, col int
		contains  []string
	}{
		{"syntax", "job \"a\" {\n  group \"g\" {\n    count = \n  }\n}\n", 3, 13, []string{"Invalid expression"}},
		{"unclosed", "job \"a\" {\n  group \"g\" {\n", 2, 13, []string{"Unclosed configuration block"}},
		{"unknown attribute", "job \"a\" {\n  group \"g\" {\n    counts = 2\n  }\n}\n", 3, 5, []string{"Unsupported argument", `"counts"`}},
		{"unknown block", "job \"a\" {\n  group \"g\" {\n    task \"t\" {\n      templat {\n      }\n    }\n  }\n}\n", 4, 7, []string{"Unsupported block type", `"templat"`}},
		{"wrong type", "job \"a\" {\n  priority = \"high\"\n}\n", 2, 14, []string{"Incorrect attribute value type", `"priority"`}},
		{"bad duration", "job \"a\" {\n  group \"g\" {\n    task \"t\" {\n      kill_timeout = \"10 sec\"\n    }\n  }\n}\n", 4, 22, []string{"Invalid duration", "kill_timeout"}},
		{"unknown variable", "job \"a\" {\n  region = \"${foo.bar}\"\n}\n", 2, 15, []string{"Unknown variable", `"foo"`}},
		{"runtime var in operator", "job \"a\" {\n  priority = attr.x + 1\n}\n", 2, 14, []string{"Runtime variable not allowed here"}},
		{"function call", "job \"a\" {\n  region = upper(\"x\")\n}\n", 2, 12, []string{"Function calls not allowed"}},
		{"missing label", "job {\n}\n", 1, 5, []string{"Missing name for job"}},
		{"no job", "# nothing\n", 1, 1, []string{"Missing job block"}},
		{"two jobs", "job \"a\" {\n}\njob \"b\" {\n}\n", 3, 1, []string{"Duplicate job block"}},
		{"two restarts", "job \"a\" {\n  group \"g\" {\n    restart {\n    }\n    restart {\n    }\n  }\n}\n", 5, 5, []string{"Duplicate restart block"}},
		{"int overflow", "job \"a\" {\n  priority = 5000000000\n}\n", 2, 14, []string{"priority"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Parse("bad.hcl", []byte(tc.src))
			require.Error(t, err)
			require.True(t, errors.Is(err, ErrParse))
			var pe *ParseError
			require.ErrorAs(t, err, &pe)
			require.Equal(t, "bad.hcl", pe.Filename)
			require.Equal(t, tc.line, pe.Line, err.Error())
			require.Equal(t, tc.col, pe.Column, err.Error())
			for _, s := range tc.contains {
				require.Contains(t, err.Error(), s)
			}
			require.Contains(t, err.Error(), "bad.hcl:")
		})
	}
}

func TestParseReportsEveryProblem(t *testing.T) {
	_, err := Parse("bad.hcl", []byte("job \"a\" {\n  foo = 1\n  group \"g\" {\n    bar = 2\n  }\n}\n"))
	require.Error(t, err)
	require.Contains(t, err.Error(), "bad.hcl:2:3: Unsupported argument")
	require.Contains(t, err.Error(), "bad.hcl:4:5: Unsupported argument")
}

func requireProto(t *testing.T, want, got proto.Message) {
	t.Helper()
	require.True(t, proto.Equal(want, got), "want %v\ngot  %v", want, got)
}

func ns(d time.Duration) int64 { return int64(d) }
