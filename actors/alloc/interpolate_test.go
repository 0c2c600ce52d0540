package alloc

import (
	"testing"

	"github.com/stretchr/testify/require"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/known/structpb"

	"github.com/troupe-dev/troupe/messages"
)

func TestInterpolate(t *testing.T) {
	env := map[string]string{"A": "1", "B": "${A}", "node.unique.name": "from-env"}
	node := &messages.Node{Name: "host-1", Attributes: map[string]string{"kernel.name": "linux"}}
	for in, want := range map[string]string{
		"":                          "",
		"plain":                     "plain",
		"${A}":                      "1",
		"x${A}y${A}z":               "x1y1z",
		"${B}":                      "${A}", // a value is not interpolated again
		"${node.unique.name}":       "from-env",
		"${attr.kernel.name}":       "linux",
		"${UNKNOWN} and ${A}":       "${UNKNOWN} and 1",
		"$A ${A":                    "$A ${A",
		"${}":                       "${}",
		"${A}${attr.kernel.name}!!": "1linux!!",
		"${env.A}":                  "1",
		`${env["A"]}`:               "1",
		`${attr["kernel.name"]}`:    "linux",
		`${attr["kernel.name"}`:     `${attr["kernel.name"}`,
	} {
		require.Equal(t, want, interpolate(in, refs{env: env, node: node}), "%q", in)
	}
	require.Equal(t, "${A}", interpolate("${A}", refs{}), "no vars")
	require.Equal(t, "${node.unique.name}", interpolate("${node.unique.name}", refs{}), "no node yet")
}

// TestTaskConfigIsInterpolated: the strings of a task's driver config (in
// lists and nested maps too) and its env block get the task's
// environment, ports included, and the node's values, as in Nomad jobs.
func TestTaskConfigIsInterpolated(t *testing.T) {
	a := bridgeAlloc(netAllocID)
	task := a.Job.TaskGroups[0].Tasks[0]
	cfg, err := structpb.NewStruct(map[string]any{
		"command": "/bin/${attr.cpu.arch}/server",
		"args":    []any{"-listen", ":${NOMAD_PORT_http}", "-node", "${node.unique.name}", "${NOMAD_ALLOC_ID}", "$HOME ${NOT_SET}"},
		"mounts":  []any{map[string]any{"source": "/srv/${meta.rack}", "readonly": true}},
		"count":   3,
	})
	require.NoError(t, err)
	task.Config = cfg
	task.Env = map[string]string{"WHERE": "${node.datacenter}/${NOMAD_JOB_ID}", "RAW": "${WHERE}"}
	before := proto.Clone(task)
	node := &messages.Node{ID: "n-1", Name: "host-1", Datacenter: "dc2",
		Attributes: map[string]string{"cpu.arch": "amd64"}, Meta: map[string]string{"rack": "r7"}}

	got := taskConfig("/alloc", node, a, task, testNet, nil)
	require.Equal(t, "/bin/amd64/server", got.Config["command"])
	require.Equal(t, []any{"-listen", ":80", "-node", "host-1", netAllocID, "$HOME ${NOT_SET}"}, got.Config["args"],
		"in a bridge network the task listens on the port's to; unknown references stay for the task's shell")
	require.Equal(t, []any{map[string]any{"source": "/srv/r7", "readonly": true}}, got.Config["mounts"])
	require.EqualValues(t, 3, got.Config["count"])
	require.Equal(t, "dc2/web", got.Env["WHERE"])
	require.Equal(t, "${WHERE}", got.Env["RAW"], "the env block sees troupe's variables, not its own")
	require.True(t, proto.Equal(before, task), "the job is not changed")

	// Without a node (unknown yet): node references stay as written.
	got = taskConfig("/alloc", nil, a, task, testNet, nil)
	require.Equal(t, "/bin/${attr.cpu.arch}/server", got.Config["command"])
	require.Equal(t, "${node.datacenter}/web", got.Env["WHERE"])
}
