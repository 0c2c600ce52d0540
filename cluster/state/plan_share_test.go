package state

import (
	"testing"
	"unsafe"

	"github.com/stretchr/testify/require"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protoreflect"

	"github.com/troupe-dev/troupe/messages"
)

func res(cpu, mem, maxMem, disk int64, tasks ...string) *messages.AllocatedResources {
	r := &messages.AllocatedResources{Tasks: map[string]*messages.AllocatedTaskResources{},
		Shared: &messages.AllocatedSharedResources{DiskMB: disk}}
	for _, t := range tasks {
		r.Tasks[t] = &messages.AllocatedTaskResources{Cpu: &messages.AllocatedCpuResources{CpuShares: cpu},
			Memory: &messages.AllocatedMemoryResources{MemoryMB: mem, MemoryMaxMB: maxMem}}
	}
	return r
}

// TestSameResources: sameResources agrees with proto.Equal on the shapes
// it is asked about, and says "not the same" for what it does not share.
func TestSameResources(t *testing.T) {
	base := res(500, 256, 0, 300, "web")
	withNet := res(500, 256, 0, 300, "web")
	withNet.Shared.Networks = []*messages.NetworkResource{{Mode: "host"}}
	withDev := res(500, 256, 0, 300, "web")
	withDev.Tasks["web"].Devices = []*messages.AllocatedDeviceResource{{Name: "gpu", DeviceIDs: []string{"a"}}}
	withCores := res(500, 256, 0, 300, "web")
	withCores.Tasks["web"].Cpu.ReservedCores = []uint32{1}
	noShared := res(500, 256, 0, 300, "web")
	noShared.Shared = nil
	noCPU := res(500, 256, 0, 300, "web")
	noCPU.Tasks["web"].Cpu = nil
	for _, tc := range []struct {
		name string
		b    *messages.AllocatedResources
		same bool
	}{
		{"equal", res(500, 256, 0, 300, "web"), true},
		{"cpu", res(501, 256, 0, 300, "web"), false},
		{"memory", res(500, 257, 0, 300, "web"), false},
		{"memory max", res(500, 256, 512, 300, "web"), false},
		{"disk", res(500, 256, 0, 301, "web"), false},
		{"task name", res(500, 256, 0, 300, "api"), false},
		{"task count", res(500, 256, 0, 300, "web", "api"), false},
		{"networks are never shared", withNet, false},
		{"devices are never shared", withDev, false},
		{"reserved cores are never shared", withCores, false},
		{"no shared block", noShared, false},
		{"no cpu block", noCPU, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			require.Equal(t, tc.same, sameResources(base, tc.b))
			if tc.same {
				require.True(t, proto.Equal(base, tc.b))
			}
		})
	}
}

// TestSameResourcesKnowsEveryField fails when a message sameResources
// compares gains a field: compare it there, then update the counts.
func TestSameResourcesKnowsEveryField(t *testing.T) {
	for _, tc := range []struct {
		msg    proto.Message
		fields int
	}{
		{&messages.AllocatedResources{}, 2},
		{&messages.AllocatedTaskResources{}, 3},
		{&messages.AllocatedCpuResources{}, 2},
		{&messages.AllocatedMemoryResources{}, 2},
		{&messages.AllocatedSharedResources{}, 2},
	} {
		var d protoreflect.MessageDescriptor = tc.msg.ProtoReflect().Descriptor()
		require.Equal(t, tc.fields, d.Fields().Len(), "%s gained a field: compare it in sameResources", d.FullName())
	}
}

// TestPlanShare: allocations of one plan share their strings, resources
// and metrics; an allocation with ports keeps its own resources.
func TestPlanShare(t *testing.T) {
	node := &messages.Node{ID: "node-1", Name: "host-1"}
	mk := func() *messages.Allocation {
		return &messages.Allocation{ID: "x", Namespace: string([]byte("default")), JobID: string([]byte("web")),
			EvalID: string([]byte("e1")), TaskGroup: string([]byte("g")), NodeID: string([]byte("node-1")),
			NodeName: string([]byte("host-1")), AllocatedResources: res(500, 256, 0, 300, "web"),
			Metrics: &messages.AllocMetricRef{NodesEvaluated: 3}}
	}
	var s planShare
	a, b := mk(), mk()
	s.alloc(a, node)
	s.alloc(b, node)
	require.Same(t, a.AllocatedResources, b.AllocatedResources)
	require.Same(t, a.Metrics, b.Metrics)
	require.Same(t, unsafeData(node.ID), unsafeData(b.NodeID))
	require.Same(t, unsafeData(a.JobID), unsafeData(b.JobID))
	require.Same(t, unsafeData(a.EvalID), unsafeData(b.EvalID))

	scored := mk()
	scored.Metrics.ScoreMetaData = []*messages.NodeScoreMeta{{NodeID: string([]byte("node-1")), ScoreNames: []string{string([]byte("binpack"))}}}
	scored2 := mk()
	scored2.Metrics.ScoreMetaData = []*messages.NodeScoreMeta{{NodeID: string([]byte("node-1")), ScoreNames: []string{string([]byte("binpack"))}}}
	s.alloc(scored, node)
	s.alloc(scored2, node)
	require.NotSame(t, scored.Metrics, scored2.Metrics, "metrics with scores are each placement's own")
	require.NotSame(t, a.Metrics, scored.Metrics)
	require.Same(t, unsafeData(scored.Metrics.ScoreMetaData[0].NodeID), unsafeData(scored2.Metrics.ScoreMetaData[0].NodeID))
	require.Same(t, unsafeData(scored.Metrics.ScoreMetaData[0].ScoreNames[0]), unsafeData(scored2.Metrics.ScoreMetaData[0].ScoreNames[0]))

	ports := mk()
	ports.AllocatedResources.Shared.Networks = []*messages.NetworkResource{{Mode: "host"}}
	own := ports.AllocatedResources
	s.alloc(ports, node)
	require.Same(t, own, ports.AllocatedResources)
}

func unsafeData(s string) *byte { return unsafe.StringData(s) }
