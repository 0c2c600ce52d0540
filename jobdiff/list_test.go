package jobdiff

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/troupe-dev/troupe/messages"
)

func TestDiffRepeatedAndMapMessages(t *testing.T) {
	a := &messages.Constraint{LTarget: "${attr.kernel.name}", RTarget: "linux", Operand: "="}
	b := &messages.Constraint{LTarget: "${node.class}", RTarget: "big", Operand: "="}
	network := func(to int32) []*messages.NetworkResource {
		return []*messages.NetworkResource{{Mode: "bridge", DynamicPorts: []*messages.Port{
			{Label: "db", To: 6379}, {Label: "admin", To: to}}}}
	}
	tests := []struct {
		name   string
		before func(*messages.Job)
		after  func(*messages.Job)
		want   []string // the job's and group's own entries; groups and tasks None unless listed
	}{
		{
			name:   "constraint inserted before an equal one is only added",
			before: func(j *messages.Job) { j.Constraints = []*messages.Constraint{a} },
			after:  func(j *messages.Job) { j.Constraints = []*messages.Constraint{b, a} },
			want: []string{
				"Edited Job example",
				"Added Constraints",
				"Added Constraints/LTarget = ${node.class}",
				"Added Constraints/Operand = =",
				"Added Constraints/RTarget = big",
			},
		},
		{
			name:   "changed constraint pairs up as edited",
			before: func(j *messages.Job) { j.Constraints = []*messages.Constraint{a, b} },
			after: func(j *messages.Job) {
				j.Constraints = []*messages.Constraint{a, {LTarget: "${node.class}", RTarget: "small", Operand: "="}}
			},
			want: []string{
				"Edited Job example",
				"Edited Constraints",
				"Edited Constraints/RTarget: big => small",
			},
		},
		{
			name:   "constraint removed",
			before: func(j *messages.Job) { j.Constraints = []*messages.Constraint{a, b} },
			after:  func(j *messages.Job) { j.Constraints = []*messages.Constraint{b} },
			want: []string{
				"Edited Job example",
				"Deleted Constraints",
				"Deleted Constraints/LTarget = ${attr.kernel.name}",
				"Deleted Constraints/Operand = =",
				"Deleted Constraints/RTarget = linux",
			},
		},
		{
			name:   "ports match by label and name it when edited",
			before: func(j *messages.Job) { j.TaskGroups[0].Networks = network(8080) },
			after: func(j *messages.Job) {
				j.TaskGroups[0].Networks = network(9090)
				ports := j.TaskGroups[0].Networks[0].DynamicPorts
				ports[0], ports[1] = ports[1], ports[0] // order does not matter
			},
			want: []string{
				"Edited Job example",
				"Edited Group cache",
				"Edited Group cache/Networks",
				"Edited Group cache/Networks/DynamicPorts",
				"None Group cache/Networks/DynamicPorts/Label = admin",
				"Edited Group cache/Networks/DynamicPorts/To: 8080 => 9090",
			},
		},
		{
			name: "volume added to a map of messages",
			before: func(j *messages.Job) {
				j.TaskGroups[0].Volumes = map[string]*messages.VolumeRequest{"data": {Name: "data", Type: "host", Source: "data"}}
			},
			after: func(j *messages.Job) {
				j.TaskGroups[0].Volumes = map[string]*messages.VolumeRequest{
					"data": {Name: "data", Type: "host", Source: "data", ReadOnly: true},
					"logs": {Name: "logs", Type: "csi", Source: "logs"},
				}
			},
			want: []string{
				"Edited Job example",
				"Edited Group cache",
				"Edited Group cache/Volumes",
				"Edited Group cache/Volumes/data",
				"Edited Group cache/Volumes/data/ReadOnly: false => true",
				"Added Group cache/Volumes/logs",
				"Added Group cache/Volumes/logs/Name = logs",
				"Added Group cache/Volumes/logs/Source = logs",
				"Added Group cache/Volumes/logs/Type = csi",
			},
		},
		{
			name:   "kill timeout prints as a duration",
			before: func(j *messages.Job) { j.TaskGroups[0].Tasks[1].KillTimeout = 5e9 },
			after:  func(j *messages.Job) { j.TaskGroups[0].Tasks[1].KillTimeout = 90e9 },
			want: []string{
				"Edited Job example",
				"Edited Group cache",
				"Edited Group cache/Task sidecar",
				"Edited Group cache/Task sidecar/KillTimeout: 5s => 1m30s",
			},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			old, new := baseJob(t), baseJob(t)
			tc.before(old)
			tc.before(new)
			tc.after(new)
			got := lines(Diff(old, new))
			var mine []string
			for _, l := range got {
				if l != "None Group cache" && l != "None Group cache/Task redis" && l != "None Group cache/Task sidecar" {
					mine = append(mine, l)
				}
			}
			require.Equal(t, tc.want, mine)
			require.Equal(t, TypeNone, Diff(new, clone(new)).Type)
		})
	}
}

func TestMatchKeysPairsDuplicatesInOrder(t *testing.T) {
	got := matchKeys([]string{"a", "b", "a"}, []string{"a", "c", "a"})
	require.Equal(t, []pair{{0, 0}, {1, -1}, {2, 2}, {-1, 1}}, got)
}
