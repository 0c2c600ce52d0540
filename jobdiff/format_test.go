package jobdiff

import (
	"testing"

	"github.com/stretchr/testify/require"
)

func TestFormat(t *testing.T) {
	old, new := baseJob(t), baseJob(t)
	new.TaskGroups[0].Count = 3
	new.TaskGroups[0].Tasks[0].Config.Fields["image"] = structString("redis:4.0")
	new.TaskGroups[0].Tasks[0].Env["MODE"] = "fast"
	new.TaskGroups[0].Tasks[1].Driver = "raw_exec"
	new.TaskGroups[0].Tasks[1].Name = "proxy"
	d := Diff(old, new)
	d.TaskGroups[0].Updates = map[string]uint64{"ignore": 2, "create/destroy update": 1}
	d.TaskGroups[0].Tasks[1].Annotations = []string{"forces create/destroy update"}

	tests := []struct {
		name    string
		d       *JobDiff
		verbose bool
		want    string
	}{
		{name: "edited", d: d, want: `+/- Job: "example"
+/- Task Group: "cache" (1 create/destroy update, 2 ignore)
  +/- Count: "1" => "3"
  +   Task: "proxy"
  +/- Task: "redis" (forces create/destroy update)
    +/- Config {
      +/- image: "redis:3.2" => "redis:4.0"
        }
    +   Env {
        + MODE: "fast"
        }
  -   Task: "sidecar"
`},
		{name: "verbose expands added and deleted tasks", d: d, verbose: true, want: `+/- Job: "example"
+/- Task Group: "cache" (1 create/destroy update, 2 ignore)
  +/- Count: "1" => "3"
  +   Task: "proxy"
    + Driver: "raw_exec"
    + Config {
      + command: "/bin/sidecar"
      }
  +/- Task: "redis" (forces create/destroy update)
    +/- Config {
      +/- image: "redis:3.2" => "redis:4.0"
        }
    +   Env {
        + MODE: "fast"
        }
  -   Task: "sidecar"
    - Driver: "exec"
    - Config {
      - command: "/bin/sidecar"
      }
`},
		{name: "unchanged", d: Diff(old, baseJob(t)), want: `Job: "example"
Task Group: "cache"
  Task: "redis"
  Task: "sidecar"
`},
		{name: "nil", d: nil, want: ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			require.Equal(t, tc.want, Format(tc.d, tc.verbose))
		})
	}
}
