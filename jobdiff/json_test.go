package jobdiff

import (
	"encoding/json"
	"testing"

	"github.com/hashicorp/nomad/api"
	"github.com/stretchr/testify/require"
)

// TestNomadClientDecodesDiff checks the wire shape: a plan response
// carrying our diff decodes into the Nomad API client's types with nothing
// lost, and its types and names read back the same.
func TestNomadClientDecodesDiff(t *testing.T) {
	old, new := baseJob(t), baseJob(t)
	new.Datacenters = []string{"dc3"}
	new.TaskGroups[0].Count = 3
	new.TaskGroups[0].Tasks[0].Config.Fields["image"] = structString("redis:4.0")
	new.TaskGroups[0].Tasks = new.TaskGroups[0].Tasks[:1]
	d := Diff(old, new)
	d.TaskGroups[0].Updates = map[string]uint64{"create/destroy update": 1}
	d.TaskGroups[0].Tasks[0].Annotations = []string{"forces create/destroy update"}

	ours, err := json.Marshal(d)
	require.NoError(t, err)
	var resp api.JobPlanResponse
	require.NoError(t, json.Unmarshal([]byte(`{"JobModifyIndex": 7, "Diff": `+string(ours)+`}`), &resp))
	require.NotNil(t, resp.Diff)
	theirs, err := json.Marshal(resp.Diff)
	require.NoError(t, err)
	require.JSONEq(t, string(ours), string(theirs))

	got := resp.Diff
	require.Equal(t, TypeEdited, got.Type)
	require.Equal(t, "example", got.ID)
	require.Len(t, got.Objects, 1)
	require.Equal(t, "Datacenters", got.Objects[0].Name)
	require.Equal(t, TypeEdited, got.Objects[0].Type)
	require.Len(t, got.TaskGroups, 1)
	g := got.TaskGroups[0]
	require.Equal(t, "cache", g.Name)
	require.Equal(t, TypeEdited, g.Type)
	require.Equal(t, map[string]uint64{"create/destroy update": 1}, g.Updates)
	require.Equal(t, &api.FieldDiff{Type: TypeEdited, Name: "Count", Old: "1", New: "3"}, g.Fields[0])
	require.Len(t, g.Tasks, 2)
	require.Equal(t, "redis", g.Tasks[0].Name)
	require.Equal(t, TypeEdited, g.Tasks[0].Type)
	require.Equal(t, []string{"forces create/destroy update"}, g.Tasks[0].Annotations)
	require.Equal(t, "Config", g.Tasks[0].Objects[0].Name)
	require.Equal(t, &api.FieldDiff{Type: TypeEdited, Name: "image", Old: "redis:3.2", New: "redis:4.0"},
		g.Tasks[0].Objects[0].Fields[0])
	require.Equal(t, "sidecar", g.Tasks[1].Name)
	require.Equal(t, TypeDeleted, g.Tasks[1].Type)
}
