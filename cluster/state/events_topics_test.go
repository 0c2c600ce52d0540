package state

import (
	"fmt"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/troupe-dev/troupe/messages"
)

// eventsAt is the events of the command applied last, read from the
// stream as a reader that started at that index gets them.
func eventsAt(t *testing.T, h *harness) []StreamEvent {
	t.Helper()
	b := nextBatches(t, h.fsm.store.SubscribeEvents(h.index, nil))
	require.Equal(t, h.index, b[0].Index, "the last command emitted events")
	for _, e := range b[0].Events {
		require.Equal(t, h.index, e.Index)
	}
	return b[0].Events
}

// rows is each event as "Topic Type Key Namespace FilterKeys".
func rows(evs []StreamEvent) []string {
	out := make([]string, len(evs))
	for i, e := range evs {
		out[i] = fmt.Sprintf("%s %s %s %q %v", e.Topic, e.Type, e.Key, e.Namespace, e.FilterKeys)
	}
	return out
}

// payloadOf is the event of that topic and key, its payload as T.
func payloadOf[T any](t *testing.T, evs []StreamEvent, topic, key string) T {
	t.Helper()
	for _, e := range evs {
		if e.Topic == topic && e.Key == key {
			p, ok := e.Payload.(T)
			require.True(t, ok, "payload of %s %s is %T", topic, key, e.Payload)
			return p
		}
	}
	require.FailNow(t, "no event", "%s %s in %v", topic, key, rows(evs))
	panic("unreachable")
}

// TestEventsDeploymentTopic: each deployment command emits its
// deployment with Nomad's type, its namespace and its job as filter key,
// the deployment as stored after the command as payload.
func TestEventsDeploymentTopic(t *testing.T) {
	h := deployedHarness(t, 1)
	b := nextBatches(t, h.fsm.store.SubscribeEvents(3, func(e *StreamEvent) bool { return e.Index == 3 }))
	require.Equal(t, []string{`Deployment DeploymentStatusUpdate d1 "default" [web]`}, rows(b[0].Events),
		"the deployment's upsert, index 3")

	require.Nil(t, h.apply(deployCmd(&messages.SetAllocHealth{DeploymentID: "d1", HealthyAllocationIDs: []string{"a1"},
		Eval: testEval("e2", "web", messages.EvalStatusPending)})))
	evs := eventsAt(t, h)
	require.Equal(t, []string{
		`Allocation DeploymentAllocHealth a1 "default" [web d1]`,
		`Deployment DeploymentAllocHealth d1 "default" [web]`,
		`Evaluation DeploymentAllocHealth e2 "default" [web]`,
	}, rows(evs))
	require.True(t, payloadOf[*messages.Allocation](t, evs, TopicAllocation, "a1").DeploymentStatus.IsHealthy())
	require.EqualValues(t, 1, payloadOf[*messages.Deployment](t, evs, TopicDeployment, "d1").TaskGroups["web"].HealthyAllocs)

	require.Nil(t, h.apply(deployCmd(&messages.PromoteDeployment{DeploymentID: "d1", All: true})))
	evs = eventsAt(t, h)
	require.Equal(t, []string{`Deployment DeploymentPromotion d1 "default" [web]`}, rows(evs))
	require.True(t, payloadOf[*messages.Deployment](t, evs, TopicDeployment, "d1").TaskGroups["web"].Promoted)

	require.Nil(t, h.apply(deployCmd(&messages.UpdateDeploymentStatus{DeploymentID: "d1",
		Status: messages.DeploymentStatusSuccessful, StatusDescription: messages.DeploymentDescSuccessful})))
	evs = eventsAt(t, h)
	require.Equal(t, []string{
		`Job DeploymentStatusUpdate web "default" []`, // its version became stable
		`Deployment DeploymentStatusUpdate d1 "default" [web]`,
	}, rows(evs))
	require.Equal(t, messages.DeploymentStatusSuccessful, payloadOf[*messages.Deployment](t, evs, TopicDeployment, "d1").Status)
	require.True(t, payloadOf[*messages.Job](t, evs, TopicJob, "web").Stable)
}

// TestEventsDeploymentCancelledByNewer: a new deployment's event comes
// with that of the older one it cancelled.
func TestEventsDeploymentCancelledByNewer(t *testing.T) {
	h := deployedHarness(t, 0)
	h.apply(deployCmd(&messages.UpsertDeployment{Deployment: testDeployment("d2", h.snap().JobByID("default", "web"), 0)}))
	evs := eventsAt(t, h)
	require.Equal(t, []string{
		`Deployment DeploymentStatusUpdate d2 "default" [web]`,
		`Deployment DeploymentStatusUpdate d1 "default" [web]`,
	}, rows(evs))
	require.Equal(t, messages.DeploymentStatusCancelled, payloadOf[*messages.Deployment](t, evs, TopicDeployment, "d1").Status)
}

// TestEventsNodePoolTopic: pools have no namespace; a deleted pool's
// event carries it as it was.
func TestEventsNodePoolTopic(t *testing.T) {
	h := newHarness(t)
	require.Nil(t, h.apply(upsertPools(&messages.NodePool{Name: "gpu", Description: "GPUs"}, &messages.NodePool{Name: "batch"})))
	evs := eventsAt(t, h)
	require.Equal(t, []string{`NodePool NodePoolUpserted gpu "" []`, `NodePool NodePoolUpserted batch "" []`}, rows(evs))
	require.Equal(t, "GPUs", payloadOf[*messages.NodePool](t, evs, TopicNodePool, "gpu").Description)

	require.Nil(t, h.apply(deletePools("gpu")))
	evs = eventsAt(t, h)
	require.Equal(t, []string{`NodePool NodePoolDeleted gpu "" []`}, rows(evs))
	require.Equal(t, "GPUs", payloadOf[*messages.NodePool](t, evs, TopicNodePool, "gpu").Description)
	require.Nil(t, h.snap().NodePoolByName("gpu"))
}

// TestEventsCSIPluginTopic: a node's fingerprint emits the plugins it
// changed, with Nomad's type for it (a node registration: Nomad has no
// type of a plugin's own), and their volumes whose health moved; a
// plugin that loses its last instance is emitted as it was; the same
// fingerprint again emits nothing.
func TestEventsCSIPluginTopic(t *testing.T) {
	h := newHarness(t)
	require.Nil(t, h.apply(registerVolume(testVolume("v", false))))
	require.Nil(t, h.apply(upsertPlugins("n1", []*messages.CSIInfo{testInstance("hostpath", true)},
		[]*messages.CSIInfo{testInstance("hostpath", true)})))
	evs := eventsAt(t, h)
	require.Equal(t, []string{
		`CSIPlugin NodeRegistration hostpath "" []`,
		`CSIVolume NodeRegistration v "default" [hostpath]`,
	}, rows(evs))
	p := payloadOf[*messages.CSIPlugin](t, evs, TopicCSIPlugin, "hostpath")
	require.EqualValues(t, 1, p.NodesHealthy)
	require.Contains(t, p.Nodes, "n1")
	require.EqualValues(t, 1, payloadOf[*messages.CSIVolume](t, evs, TopicCSIVolume, "v").NodesHealthy)

	same := h.index
	require.Nil(t, h.apply(upsertPlugins("n1", []*messages.CSIInfo{testInstance("hostpath", true)},
		[]*messages.CSIInfo{testInstance("hostpath", true)})))
	h.apply(registerJob(testJob("end", 10, 10), nil))
	b := nextBatches(t, h.fsm.store.SubscribeEvents(same+1, nil))
	require.Equal(t, h.index, b[0].Index, "an unchanged fingerprint emits nothing")

	require.Nil(t, h.apply(upsertPlugins("n1", nil, nil))) // n1 runs no plugin now
	evs = eventsAt(t, h)
	require.Equal(t, []string{
		`CSIPlugin NodeRegistration hostpath "" []`,
		`CSIVolume NodeRegistration v "default" [hostpath]`,
	}, rows(evs))
	require.Nil(t, h.snap().CSIPluginByID("hostpath"))
	require.Contains(t, payloadOf[*messages.CSIPlugin](t, evs, TopicCSIPlugin, "hostpath").Nodes, "n1", "as it was")
}

// TestEventsServiceTopic: registrations carry their namespace and their
// job and service name as filter keys; one an upsert drops, one deleted
// by ID and those of a stopped allocation are ServiceDeregistration.
func TestEventsServiceTopic(t *testing.T) {
	h := servicesHarness(t)
	require.Nil(t, h.apply(upsertServices("a1", testReg("r1", "web", "a1", 80), testReg("r2", "api", "a1", 81))))
	evs := eventsAt(t, h)
	require.Equal(t, []string{
		`Service ServiceRegistration r1 "default" [web web]`,
		`Service ServiceRegistration r2 "default" [web api]`,
	}, rows(evs))
	require.EqualValues(t, 81, payloadOf[*messages.ServiceRegistration](t, evs, TopicService, "r2").Port)

	require.Nil(t, h.apply(upsertServices("a1", testReg("r1", "web", "a1", 90))))
	evs = eventsAt(t, h)
	require.Equal(t, []string{
		`Service ServiceDeregistration r2 "default" [web api]`,
		`Service ServiceRegistration r1 "default" [web web]`,
	}, rows(evs))
	require.EqualValues(t, 90, payloadOf[*messages.ServiceRegistration](t, evs, TopicService, "r1").Port)

	require.Nil(t, h.apply(&messages.Command{Cmd: &messages.Command_DeleteServiceRegistrationByID{
		DeleteServiceRegistrationByID: &messages.DeleteServiceRegistrationByID{Namespace: "default", ID: "r1"}}}))
	evs = eventsAt(t, h)
	require.Equal(t, []string{`Service ServiceDeregistration r1 "default" [web web]`}, rows(evs))
	require.EqualValues(t, 90, payloadOf[*messages.ServiceRegistration](t, evs, TopicService, "r1").Port, "as it was")

	require.Nil(t, h.apply(upsertServices("a2", testReg("r3", "web", "a2", 82))))
	require.Nil(t, h.apply(&messages.Command{Cmd: &messages.Command_DeleteServiceRegistrationsByAlloc{
		DeleteServiceRegistrationsByAlloc: &messages.DeleteServiceRegistrationsByAlloc{AllocIDs: []string{"a2"}}}}))
	require.Equal(t, []string{`Service ServiceDeregistration r3 "default" [web web]`}, rows(eventsAt(t, h)))
}

// TestEventsNodeStatusType: a node's status change is Nomad's
// NodeStreamEvent.
func TestEventsNodeStatusType(t *testing.T) {
	h := newHarness(t)
	h.apply(registerNode(testNode("n1", 1000, 1000)))
	require.Nil(t, h.apply(&messages.Command{Cmd: &messages.Command_UpdateNodeStatus{UpdateNodeStatus: &messages.UpdateNodeStatus{
		NodeID: "n1", Status: messages.NodeStatusDown}}}))
	evs := eventsAt(t, h)
	require.Equal(t, []string{`Node NodeStreamEvent n1 "" []`}, rows(evs))
	require.Equal(t, messages.NodeStatusDown, payloadOf[*messages.Node](t, evs, TopicNode, "n1").Status)
}
