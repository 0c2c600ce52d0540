package state

import (
	"bytes"
	"errors"
	"io"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/troupe-dev/troupe/messages"
)

func upsertServices(alloc string, regs ...*messages.ServiceRegistration) *messages.Command {
	return &messages.Command{Cmd: &messages.Command_UpsertServiceRegistrations{
		UpsertServiceRegistrations: &messages.UpsertServiceRegistrations{AllocID: alloc, Services: regs}}}
}

func testReg(id, name, alloc string, port int32) *messages.ServiceRegistration {
	return &messages.ServiceRegistration{ID: id, ServiceName: name, Namespace: "default", NodeID: "n1",
		Datacenter: "dc1", JobID: "web", AllocID: alloc, Address: "127.0.0.1", Port: port, Tags: []string{"t"}}
}

// servicesHarness has a node, a job and two running allocations, a1 and a2.
func servicesHarness(t *testing.T) *harness {
	h := newHarness(t)
	h.apply(registerNode(testNode("n1", 4000, 4000)))
	h.apply(registerJob(testJob("web", 100, 100), testEval("e1", "web", "pending")))
	h.apply(plan(&messages.ApplyPlan{Place: []*messages.Allocation{
		testAlloc("a1", "web", "n1", "e1", 100, 100), testAlloc("a2", "web", "n1", "e1", 100, 100)}}))
	for _, id := range []string{"a1", "a2"} {
		h.apply(clientUpdate(&messages.Allocation{ID: id, ClientStatus: messages.AllocClientStatusRunning}))
	}
	return h
}

func TestServicesUpsertReplacesAnAllocsRegistrations(t *testing.T) {
	h := servicesHarness(t)
	require.Nil(t, h.apply(upsertServices("a1", testReg("r1", "web", "a1", 80), testReg("r2", "api", "a1", 81))))
	require.Nil(t, h.apply(upsertServices("a2", testReg("r3", "web", "a2", 82))))
	first := h.snap().ServiceByID("default", "r1")
	require.NotNil(t, first)
	require.Len(t, h.snap().ServicesByName("default", "web"), 2)
	require.Len(t, h.snap().ServicesByAlloc("a1"), 2)

	// The same registrations again (a restarted client) change nothing.
	idx := h.snap().Index(TableServices)
	require.Nil(t, h.apply(upsertServices("a1", testReg("r1", "web", "a1", 80), testReg("r2", "api", "a1", 81))))
	require.Equal(t, idx, h.snap().Index(TableServices))
	require.Equal(t, first.ModifyIndex, h.snap().ServiceByID("default", "r1").ModifyIndex)

	// A registration no longer listed goes; a changed one keeps its CreateIndex.
	require.Nil(t, h.apply(upsertServices("a1", testReg("r1", "web", "a1", 90))))
	require.Nil(t, h.snap().ServiceByID("default", "r2"))
	r1 := h.snap().ServiceByID("default", "r1")
	require.Equal(t, int32(90), r1.Port)
	require.Equal(t, first.CreateIndex, r1.CreateIndex)
	require.Greater(t, r1.ModifyIndex, first.ModifyIndex)
	require.Len(t, h.snap().Services(), 2)
	require.Len(t, h.snap().ServicesByNamespace("default"), 2)
	require.Empty(t, h.snap().ServicesByNamespace("other"))
}

func TestServicesUpsertRefusals(t *testing.T) {
	h := servicesHarness(t)
	err, _ := h.apply(upsertServices("nope", testReg("r1", "web", "nope", 80))).(error)
	require.True(t, errors.Is(err, ErrAllocNotFound), "%v", err)
	err, _ = h.apply(upsertServices("a1", testReg("r1", "web", "a2", 80))).(error)
	require.True(t, errors.Is(err, ErrBadCommand), "%v", err)
	h.apply(clientUpdate(&messages.Allocation{ID: "a1", ClientStatus: messages.AllocClientStatusComplete}))
	err, _ = h.apply(upsertServices("a1", testReg("r1", "web", "a1", 80))).(error)
	require.True(t, errors.Is(err, ErrAllocTerminal), "%v", err)
	require.Empty(t, h.snap().Services(), "nothing stored")
}

func TestServicesGoWithTheirAllocation(t *testing.T) {
	h := servicesHarness(t)
	h.apply(upsertServices("a1", testReg("r1", "web", "a1", 80)))
	h.apply(upsertServices("a2", testReg("r2", "web", "a2", 81), testReg("r3", "db", "a2", 82)))

	// a1 stops on its client: its registrations go.
	h.apply(clientUpdate(&messages.Allocation{ID: "a1", ClientStatus: messages.AllocClientStatusComplete}))
	require.Nil(t, h.snap().ServiceByID("default", "r1"))
	require.Len(t, h.snap().Services(), 2)

	// Deleted by ID, then by allocation.
	del := &messages.Command{Cmd: &messages.Command_DeleteServiceRegistrationByID{
		DeleteServiceRegistrationByID: &messages.DeleteServiceRegistrationByID{Namespace: "default", ID: "r3"}}}
	require.Nil(t, h.apply(del))
	err, _ := h.apply(del).(error)
	require.True(t, errors.Is(err, ErrServiceNotFound), "%v", err)
	require.Nil(t, h.apply(&messages.Command{Cmd: &messages.Command_DeleteServiceRegistrationsByAlloc{
		DeleteServiceRegistrationsByAlloc: &messages.DeleteServiceRegistrationsByAlloc{AllocIDs: []string{"a2"}}}}))
	require.Empty(t, h.snap().Services())
}

func TestServicesLostWithTheirNodeAndSnapshot(t *testing.T) {
	h := servicesHarness(t)
	h.apply(upsertServices("a1", testReg("r1", "web", "a1", 80)))
	h.apply(upsertServices("a2", testReg("r2", "web", "a2", 81)))

	sink := persist(t, h.fsm)
	other := newHarness(t)
	require.NoError(t, other.fsm.Restore(io.NopCloser(bytes.NewReader(sink.Bytes()))))
	require.Len(t, other.snap().Services(), 2)
	require.Equal(t, h.snap().ServiceByID("default", "r1").String(), other.snap().ServiceByID("default", "r1").String())
	require.Len(t, other.snap().ServicesByName("default", "web"), 2)
	require.Len(t, other.snap().ServicesByAlloc("a2"), 1)

	// The node goes down: its allocations are lost, and their services go.
	h.apply(&messages.Command{Cmd: &messages.Command_UpdateNodeStatus{
		UpdateNodeStatus: &messages.UpdateNodeStatus{NodeID: "n1", Status: messages.NodeStatusDown}}})
	require.Empty(t, h.snap().Services())
}

func TestServicesFromClientReports(t *testing.T) {
	h := servicesHarness(t)
	report := func(id, status string, regs ...*messages.ServiceRegistration) {
		a := &messages.Allocation{ID: id, ClientStatus: status}
		if regs != nil {
			a.ServiceRegistrations = &messages.AllocServiceRegistrations{Registrations: regs}
		}
		h.apply(clientUpdate(a))
	}
	report("a1", messages.AllocClientStatusRunning, testReg("r1", "web", "a1", 80))
	require.Len(t, h.snap().ServicesByAlloc("a1"), 1)
	require.Nil(t, h.snap().AllocByID("a1").ServiceRegistrations, "the allocation does not keep them")
	report("a1", messages.AllocClientStatusRunning) // no set: no change
	require.Len(t, h.snap().ServicesByAlloc("a1"), 1)
	report("a2", messages.AllocClientStatusRunning, testReg("r1", "web", "a2", 81))
	require.Empty(t, h.snap().ServicesByAlloc("a2"), "an ID of another allocation is refused")
	h.apply(clientUpdate(&messages.Allocation{ID: "a1", ClientStatus: messages.AllocClientStatusRunning,
		ServiceRegistrations: &messages.AllocServiceRegistrations{}}))
	require.Empty(t, h.snap().ServicesByAlloc("a1"), "an empty set deregisters")
	report("a1", messages.AllocClientStatusComplete, testReg("r1", "web", "a1", 80))
	require.Empty(t, h.snap().Services(), "a terminal allocation registers nothing")
}
