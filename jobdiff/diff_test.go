package jobdiff

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/troupe-dev/troupe/messages"
)

// added lists every set field of baseJob, none of its server-managed ones.
var added = []string{
	"Added Job example",
	"Added Name = example",
	"Added Namespace = default",
	"Added Priority = 50",
	"Added Type = service",
	"Added Datacenters",
	"Added Datacenters/Datacenters = dc1",
	"Added Datacenters/Datacenters = dc2",
	"Added Group cache",
	"Added Group cache/Count = 1",
	"Added Group cache/RestartPolicy",
	"Added Group cache/RestartPolicy/Attempts = 2",
	"Added Group cache/RestartPolicy/Delay = 15s",
	"Added Group cache/RestartPolicy/Interval = 30m0s",
	"Added Group cache/RestartPolicy/Mode = fail",
	"Added Group cache/Task redis",
	"Added Group cache/Task redis/Driver = docker",
	"Added Group cache/Task redis/Config",
	"Added Group cache/Task redis/Config/image = redis:3.2",
	"Added Group cache/Task redis/Config/ports[0] = db",
	"Added Group cache/Task redis/Env",
	"Added Group cache/Task redis/Env/LOG = info",
	"Added Group cache/Task redis/Resources",
	"Added Group cache/Task redis/Resources/CPU = 500",
	"Added Group cache/Task redis/Resources/MemoryMB = 256",
	"Added Group cache/Task sidecar",
	"Added Group cache/Task sidecar/Driver = exec",
	"Added Group cache/Task sidecar/Config",
	"Added Group cache/Task sidecar/Config/command = /bin/sidecar",
}

var unchanged = []string{
	"None Job example",
	"None Group cache",
	"None Group cache/Task redis",
	"None Group cache/Task sidecar",
}

func TestDiff(t *testing.T) {
	deleted := make([]string, len(added))
	for i, l := range added {
		deleted[i] = strings.Replace(l, "Added", "Deleted", 1)
	}
	tests := []struct {
		name   string
		old    bool                // whether there is an old job (baseJob)
		change func(*messages.Job) // makes the new job from baseJob's copy
		gone   bool                // no new job
		want   []string
	}{
		{name: "new job", change: func(*messages.Job) {}, want: added},
		{name: "deleted job", old: true, gone: true, want: deleted},
		{name: "no change", old: true, change: func(*messages.Job) {}, want: unchanged},
		{name: "server-managed fields only", old: true, change: func(j *messages.Job) {
			j.Version, j.Status, j.StatusDescription, j.Stable = 0, "", "", false
			j.CreateIndex, j.ModifyIndex, j.JobModifyIndex, j.SubmitTime = 0, 0, 0, 0
			j.MultiregionRollout = "another registration"
		}, want: unchanged},
		{name: "task image in config", old: true, change: func(j *messages.Job) {
			j.TaskGroups[0].Tasks[0].Config.Fields["image"] = structString("redis:4.0")
		}, want: []string{
			"Edited Job example",
			"Edited Group cache",
			"Edited Group cache/Task redis",
			"Edited Group cache/Task redis/Config",
			"Edited Group cache/Task redis/Config/image: redis:3.2 => redis:4.0",
			"None Group cache/Task sidecar",
		}},
		{name: "added task group", old: true, change: func(j *messages.Job) {
			j.TaskGroups = append(j.TaskGroups, &messages.TaskGroup{Name: "api", Count: 2,
				Tasks: []*messages.Task{{Name: "web", Driver: "exec"}}})
		}, want: []string{
			"Edited Job example",
			"Added Group api",
			"Added Group api/Count = 2",
			"Added Group api/Task web",
			"Added Group api/Task web/Driver = exec",
			"None Group cache",
			"None Group cache/Task redis",
			"None Group cache/Task sidecar",
		}},
		{name: "removed task", old: true, change: func(j *messages.Job) {
			j.TaskGroups[0].Tasks = j.TaskGroups[0].Tasks[:1]
		}, want: []string{
			"Edited Job example",
			"Edited Group cache",
			"None Group cache/Task redis",
			"Deleted Group cache/Task sidecar",
			"Deleted Group cache/Task sidecar/Driver = exec",
			"Deleted Group cache/Task sidecar/Config",
			"Deleted Group cache/Task sidecar/Config/command = /bin/sidecar",
		}},
		{name: "env value changed and added", old: true, change: func(j *messages.Job) {
			j.TaskGroups[0].Tasks[0].Env = map[string]string{"LOG": "debug", "MODE": "fast"}
		}, want: []string{
			"Edited Job example",
			"Edited Group cache",
			"Edited Group cache/Task redis",
			"Edited Group cache/Task redis/Env",
			"Edited Group cache/Task redis/Env/LOG: info => debug",
			"Added Group cache/Task redis/Env/MODE = fast",
			"None Group cache/Task sidecar",
		}},
		{name: "count", old: true, change: func(j *messages.Job) { j.TaskGroups[0].Count = 3 }, want: []string{
			"Edited Job example",
			"Edited Group cache",
			"Edited Group cache/Count: 1 => 3",
			"None Group cache/Task redis",
			"None Group cache/Task sidecar",
		}},
		{name: "count to zero shows the zero", old: true, change: func(j *messages.Job) { j.TaskGroups[0].Count = 0 }, want: []string{
			"Edited Job example",
			"Edited Group cache",
			"Edited Group cache/Count: 1 => 0",
			"None Group cache/Task redis",
			"None Group cache/Task sidecar",
		}},
		{name: "string emptied is deleted", old: true, change: func(j *messages.Job) { j.Namespace = "" }, want: append([]string{
			"Edited Job example",
			"Deleted Namespace = default",
		}, unchanged[1:]...)},
		{name: "datacenter added", old: true, change: func(j *messages.Job) {
			j.Datacenters = []string{"dc3", "dc1", "dc2"}
		}, want: append([]string{
			"Edited Job example",
			"Added Datacenters",
			"Added Datacenters/Datacenters = dc3",
		}, unchanged[1:]...)},
		{name: "datacenter replaced", old: true, change: func(j *messages.Job) {
			j.Datacenters = []string{"dc3"}
		}, want: append([]string{
			"Edited Job example",
			"Edited Datacenters",
			"Added Datacenters/Datacenters = dc3",
			"Deleted Datacenters/Datacenters = dc1",
			"Deleted Datacenters/Datacenters = dc2",
		}, unchanged[1:]...)},
		{name: "datacenters reordered", old: true, change: func(j *messages.Job) {
			j.Datacenters = []string{"dc2", "dc1"}
		}, want: unchanged},
		{name: "restart policy attempts", old: true, change: func(j *messages.Job) {
			j.TaskGroups[0].RestartPolicy.Attempts = 5
		}, want: []string{
			"Edited Job example",
			"Edited Group cache",
			"Edited Group cache/RestartPolicy",
			"Edited Group cache/RestartPolicy/Attempts: 2 => 5",
			"None Group cache/Task redis",
			"None Group cache/Task sidecar",
		}},
		{name: "restart policy removed", old: true, change: func(j *messages.Job) {
			j.TaskGroups[0].RestartPolicy = nil
		}, want: []string{
			"Edited Job example",
			"Edited Group cache",
			"Deleted Group cache/RestartPolicy",
			"Deleted Group cache/RestartPolicy/Attempts = 2",
			"Deleted Group cache/RestartPolicy/Delay = 15s",
			"Deleted Group cache/RestartPolicy/Interval = 30m0s",
			"Deleted Group cache/RestartPolicy/Mode = fail",
			"None Group cache/Task redis",
			"None Group cache/Task sidecar",
		}},
		{name: "nested config keys", old: true, change: func(j *messages.Job) {
			c := config(t, map[string]any{"image": "redis:3.2", "ports": []any{"db", "admin"},
				"mounts": []any{map[string]any{"source": "/data", "readonly": true}}})
			j.TaskGroups[0].Tasks[0].Config = c
		}, want: []string{
			"Edited Job example",
			"Edited Group cache",
			"Edited Group cache/Task redis",
			"Edited Group cache/Task redis/Config",
			"Added Group cache/Task redis/Config/mounts[0][readonly] = true",
			"Added Group cache/Task redis/Config/mounts[0][source] = /data",
			"Added Group cache/Task redis/Config/ports[1] = admin",
			"None Group cache/Task sidecar",
		}},
		{name: "different ID", old: true, change: func(j *messages.Job) { j.ID = "other" }, want: []string{
			"Edited Job other",
			"Edited ID: example => other",
			"None Group cache",
			"None Group cache/Task redis",
			"None Group cache/Task sidecar",
		}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var old, new *messages.Job
			if tc.old {
				old = baseJob(t)
			}
			if !tc.gone {
				new = clone(baseJob(t))
				tc.change(new)
			}
			require.Equal(t, tc.want, lines(Diff(old, new)))
		})
	}
}

func TestDiffBothNil(t *testing.T) {
	require.Equal(t, &JobDiff{Type: TypeNone}, Diff(nil, nil))
}
