package httpapi

import (
	"bytes"
	"encoding/json"
	"testing"

	nomad "github.com/hashicorp/nomad/api"
	"github.com/stretchr/testify/require"

	"github.com/troupe-dev/troupe/cluster/state"
	"github.com/troupe-dev/troupe/messages"
)

// decodeAsNomad writes v as the API does and decodes it into out, one of
// Nomad's client types.
func decodeAsNomad(t *testing.T, v, out any) {
	t.Helper()
	var buf bytes.Buffer
	require.NoError(t, writeJSON(&buf, v, false))
	require.NoError(t, json.Unmarshal(buf.Bytes(), out))
}

// TestVolumeJSONAllocs: a volume's claims come out as Nomad's ReadAllocs
// and WriteAllocs (IDs to null) and Claims stay.
func TestVolumeJSONAllocs(t *testing.T) {
	v := &messages.CSIVolume{ID: "vol1", Claims: []*messages.CSIVolumeClaim{
		{AllocationID: "a-read", Mode: "read"}, {AllocationID: "a-write", Mode: "write"}}}
	snap := state.NewStore().Snapshot()
	var got nomad.CSIVolume
	decodeAsNomad(t, newVolumeJSON(snap, v), &got)
	require.Equal(t, map[string]*nomad.Allocation{"a-read": nil}, got.ReadAllocs)
	require.Equal(t, map[string]*nomad.Allocation{"a-write": nil}, got.WriteAllocs)
	require.NotNil(t, got.Allocations, "a list, empty when the allocations are gone")

	var raw map[string]json.RawMessage
	decodeAsNomad(t, newVolumeJSON(snap, v), &raw)
	require.Contains(t, raw, "Claims")
}

// TestEmptyShapesPresent: a node and an allocation with no resources at
// all still carry every struct Nomad's CLI dereferences, zero-valued.
func TestEmptyShapesPresent(t *testing.T) {
	var node nomad.Node
	decodeAsNomad(t, newNodeJSON(&messages.Node{ID: "n1"}), &node)
	require.NotNil(t, node.Resources)
	require.NotNil(t, node.Resources.CPU)
	require.NotNil(t, node.Resources.MemoryMB)
	require.NotNil(t, node.Resources.DiskMB)
	require.NotNil(t, node.Reserved)
	require.NotNil(t, node.Reserved.CPU)
	require.NotNil(t, node.NodeResources)
	require.NotNil(t, node.ReservedResources)

	var alloc nomad.Allocation
	a := &messages.Allocation{ID: "a1", AllocatedResources: &messages.AllocatedResources{
		Tasks: map[string]*messages.AllocatedTaskResources{"t": {}},
		Shared: &messages.AllocatedSharedResources{Networks: []*messages.NetworkResource{{Mode: "bridge", IP: "10.0.0.2",
			ReservedPorts: []*messages.Port{{Label: "db", Value: 5432, To: 5432}},
			DynamicPorts:  []*messages.Port{{Label: "http", Value: 23456, To: 8080}}}}}}}
	decodeAsNomad(t, newAllocJSON(a), &alloc)
	require.NotNil(t, alloc.Resources)
	require.NotNil(t, alloc.Resources.CPU)
	require.NotNil(t, alloc.Resources.DiskMB)
	require.NotNil(t, alloc.TaskResources["t"].CPU)
	require.NotNil(t, alloc.TaskResources["t"].MemoryMB)
	require.NotNil(t, alloc.Metrics)
	require.Equal(t, []nomad.PortMapping{{Label: "db", Value: 5432, To: 5432, HostIP: "10.0.0.2"},
		{Label: "http", Value: 23456, To: 8080, HostIP: "10.0.0.2"}}, alloc.AllocatedResources.Shared.Ports)

	var bare nomad.Allocation
	decodeAsNomad(t, newAllocJSON(&messages.Allocation{ID: "a2"}), &bare)
	require.NotNil(t, bare.AllocatedResources)
	require.NotNil(t, bare.Resources.DiskMB)
}
