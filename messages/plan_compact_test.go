package messages

import (
	"errors"
	"fmt"
	"slices"
	"testing"

	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protoreflect"
)

// TestCompactPlanFieldsClassified fails when Allocation gains a field
// that CompactPlan does not place: it would be lost in the raft log.
func TestCompactPlanFieldsClassified(t *testing.T) {
	fields := (&Allocation{}).ProtoReflect().Descriptor().Fields()
	for i := range fields.Len() {
		name := string(fields.Get(i).Name())
		if !slices.Contains(placedFields, name) && !slices.Contains(commonFields, name) && !slices.Contains(fullFields, name) {
			t.Errorf("Allocation.%s is in none of placedFields, commonFields, fullFields", name)
		}
	}
}

// filled is an allocation with every field of names set (scalars to a
// value of their name, messages to an empty message).
func filled(t *testing.T, names ...string) *Allocation {
	a := &Allocation{}
	m := a.ProtoReflect()
	for _, name := range names {
		fd := m.Descriptor().Fields().ByName(protoreflect.Name(name))
		switch {
		case fd.IsMap() || fd.IsList():
			t.Fatalf("%s: only scalar and message fields are filled", name)
		case fd.Kind() == protoreflect.StringKind:
			m.Set(fd, protoreflect.ValueOfString("v-"+name))
		case fd.Kind() == protoreflect.Uint32Kind:
			m.Set(fd, protoreflect.ValueOfUint32(uint32(len(name))))
		case fd.Kind() == protoreflect.Uint64Kind:
			m.Set(fd, protoreflect.ValueOfUint64(uint64(len(name))))
		case fd.Kind() == protoreflect.Int64Kind:
			m.Set(fd, protoreflect.ValueOfInt64(int64(len(name))))
		case fd.Kind() == protoreflect.MessageKind:
			m.Set(fd, protoreflect.ValueOfMessage(m.NewField(fd).Message()))
		default:
			t.Fatalf("%s: kind %s not filled", name, fd.Kind())
		}
	}
	return a
}

// roundTrip compacts p, sends it through the wire and expands it.
func roundTrip(t *testing.T, p *ApplyPlan) (*ApplyPlan, int) {
	t.Helper()
	data, err := proto.Marshal(&Command{Cmd: &Command_ApplyPlan{ApplyPlan: CompactPlan(p)}})
	if err != nil {
		t.Fatal(err)
	}
	var cmd Command
	if err := proto.Unmarshal(data, &cmd); err != nil {
		t.Fatal(err)
	}
	got := cmd.GetApplyPlan()
	if err := got.ExpandPlaced(); err != nil {
		t.Fatal(err)
	}
	return got, len(data)
}

func TestCompactPlanRoundTripEveryShape(t *testing.T) {
	res := &AllocatedResources{Shared: &AllocatedSharedResources{DiskMB: 10}}
	plain := func(id, node, group string, i uint32) *Allocation {
		return &Allocation{ID: id, Namespace: "default", EvalID: "e1", JobID: "web", JobVersion: 3, TaskGroup: group,
			Name: fmt.Sprintf("web.%s[%d]", group, i), Index: i, NodeID: node, NodeName: "name-" + node,
			AllocatedResources: res, DesiredStatus: "run", ClientStatus: "pending", CreateTime: 5, ModifyTime: 5,
			DeploymentID: "d1", Metrics: &AllocMetricRef{NodesEvaluated: 10}}
	}
	odd := plain("a5", "n5", "api", 5)
	odd.Name = "web.api[7]" // not its index: travels as it is
	scored := plain("a6", "n6", "api", 6)
	scored.Metrics = &AllocMetricRef{NodesEvaluated: 10, ScoreMetaData: []*NodeScoreMeta{{NodeID: "n6", NormScore: 0.5}}}
	resched := plain("a7", "n7", "api", 7)
	resched.PreviousAllocation = "a0"
	resched.RescheduleTracker = &RescheduleTracker{}
	noMetrics := plain("a8", "n8", "api", 8)
	noMetrics.Metrics = nil
	noName := plain("a9", "n9", "api", 9)
	noName.Name = ""
	own := plain("a10", "n10", "api", 10)
	own.AllocatedResources = &AllocatedResources{Shared: &AllocatedSharedResources{DiskMB: 10}}
	prev := plain("a11", "n11", "api", 11)
	prev.PreviousAllocation = "a1"

	place := []*Allocation{plain("a1", "n1", "web", 0), plain("a2", "n2", "api", 1), plain("a3", "n1", "web", 2),
		filled(t, append(slices.Clone(commonFields), placedFields...)...), odd, scored, resched, noMetrics, noName, own, prev,
		filled(t, "ID", "Job", "NextAllocation", "CreateIndex", "DeploymentStatus")}
	p := &ApplyPlan{EvalID: "e1", Place: place, Stop: []*AllocStopUpdate{{AllocID: "old"}}}
	before := proto.Clone(p).(*ApplyPlan)

	got, _ := roundTrip(t, p)
	if !proto.Equal(p, before) {
		t.Fatal("CompactPlan changed the plan it was given")
	}
	if len(got.Place) != len(place) || len(got.Placed) != 0 || len(got.PlaceCommon) != 0 {
		t.Fatalf("expanded to %d placements, %d placed, %d commons", len(got.Place), len(got.Placed), len(got.PlaceCommon))
	}
	for i := range place {
		if !proto.Equal(got.Place[i], place[i]) {
			t.Errorf("placement %d: got %v\nwant %v", i, got.Place[i], place[i])
		}
	}
	if !proto.Equal(got.Stop[0], p.Stop[0]) || got.EvalID != "e1" {
		t.Errorf("the rest of the plan changed: %v", got)
	}
	// Placements of one group share its common form's messages.
	if got.Place[0].AllocatedResources != got.Place[2].AllocatedResources || got.Place[0].Metrics != got.Place[2].Metrics {
		t.Error("placements of one common form do not share its resources and metrics")
	}
}

// A thousand placements of one group take a third of the bytes.
func TestCompactPlanSmaller(t *testing.T) {
	res := &AllocatedResources{Shared: &AllocatedSharedResources{DiskMB: 10},
		Tasks: map[string]*AllocatedTaskResources{"t": {Cpu: &AllocatedCpuResources{CpuShares: 100}}}}
	p := &ApplyPlan{EvalID: "eval-0000-1111-2222-333333333333"}
	for i := range 1000 {
		p.Place = append(p.Place, &Allocation{ID: fmt.Sprintf("%08d-aaaa-bbbb-cccc-dddddddddddd", i), Namespace: "default",
			EvalID: p.EvalID, JobID: "bench-00001", TaskGroup: "g", Name: fmt.Sprintf("bench-00001.g[%d]", i), Index: uint32(i),
			NodeID: fmt.Sprintf("%08d-node-bbbb-cccc-dddddddddddd", i%97), NodeName: fmt.Sprintf("node-%d", i%97),
			AllocatedResources: res, DesiredStatus: "run", ClientStatus: "pending", CreateTime: 1 << 60, ModifyTime: 1 << 60,
			Metrics: &AllocMetricRef{NodesEvaluated: 10000}})
	}
	full, err := proto.Marshal(p)
	if err != nil {
		t.Fatal(err)
	}
	got, compact := roundTrip(t, p)
	t.Logf("1000 placements: %d bytes in full, %d compact", len(full), compact)
	if compact*2 > len(full) {
		t.Errorf("compact plan is %d bytes, full %d: not under half", compact, len(full))
	}
	for i := range p.Place {
		if !proto.Equal(got.Place[i], p.Place[i]) {
			t.Fatalf("placement %d differs after the round trip", i)
		}
	}
}

func TestExpandPlacedRefusesAMissingCommon(t *testing.T) {
	p := &ApplyPlan{PlaceCommon: []*Allocation{{JobID: "j"}}, Placed: []*PlacedAlloc{{Common: 0, ID: "a"}, {Common: 3, ID: "b"}}}
	if err := p.ExpandPlaced(); !errors.Is(err, ErrBadPlacement) {
		t.Fatalf("err = %v, want ErrBadPlacement", err)
	}
	full := &ApplyPlan{Place: []*Allocation{{ID: "a"}}}
	if err := full.ExpandPlaced(); err != nil || len(full.Place) != 1 {
		t.Fatalf("a full plan: %v, %d placements", err, len(full.Place))
	}
}

func TestDerivedName(t *testing.T) {
	for _, c := range []struct {
		name string
		want bool
	}{{"web.api[3]", true}, {"web.api[03]", false}, {"web.api[4]", false}, {"web.ap[3]", false},
		{"web.api[3", false}, {"web.api[]", false}, {"webxapi[3]", false}, {"", false}, {"web.api[3]]", false}} {
		if got := derivedName(c.name, "web", "api", 3); got != c.want {
			t.Errorf("derivedName(%q) = %v, want %v", c.name, got, c.want)
		}
	}
}
