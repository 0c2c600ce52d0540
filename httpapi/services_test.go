package httpapi

import (
	"errors"
	"fmt"
	"net/http"
	"testing"

	nomad "github.com/hashicorp/nomad/api"
	"github.com/stretchr/testify/require"

	"github.com/troupe-dev/troupe/messages"
)

// withServices stores a node, a job and n running allocations of it in
// namespace ns, each registering service name with its own port.
func withServices(t *testing.T, b *fsmBackend, ns, name string, n int, tags ...string) {
	t.Helper()
	if ns != "default" {
		b.mustApply(t, &messages.Command{Cmd: &messages.Command_UpsertNamespaces{
			UpsertNamespaces: &messages.UpsertNamespaces{Namespaces: []*messages.Namespace{{Name: ns}}}}})
	}
	b.mustApply(t, &messages.Command{Cmd: &messages.Command_RegisterNode{RegisterNode: &messages.RegisterNode{
		Node: &messages.Node{ID: "n1", Name: "n1", Datacenter: "dc1", Status: messages.NodeStatusReady}}}})
	job := &messages.Job{ID: name, Name: name, Namespace: ns, Type: "service", Priority: 50, Datacenters: []string{"dc1"},
		TaskGroups: []*messages.TaskGroup{{Name: "g", Count: int32(n), Tasks: []*messages.Task{{Name: "t", Driver: "raw_exec"}}}}}
	b.mustApply(t, &messages.Command{Cmd: &messages.Command_RegisterJob{RegisterJob: &messages.RegisterJob{Job: job}}})
	for i := range n {
		id := fmt.Sprintf("%s-%s-a%d", ns, name, i)
		b.mustApply(t, &messages.Command{Cmd: &messages.Command_ApplyPlan{ApplyPlan: &messages.ApplyPlan{Place: []*messages.Allocation{{
			ID: id, Namespace: ns, JobID: name, NodeID: "n1", TaskGroup: "g", Name: fmt.Sprintf("%s.g[%d]", name, i)}}}}})
		b.mustApply(t, &messages.Command{Cmd: &messages.Command_UpdateAllocsFromClient{UpdateAllocsFromClient: &messages.UpdateAllocsFromClient{
			Allocs: []*messages.Allocation{{ID: id, ClientStatus: messages.AllocClientStatusRunning}}}}})
		b.mustApply(t, &messages.Command{Cmd: &messages.Command_UpsertServiceRegistrations{UpsertServiceRegistrations: &messages.UpsertServiceRegistrations{
			AllocID: id, Services: []*messages.ServiceRegistration{{ID: "_nomad-task-" + id + "-" + name, ServiceName: name,
				AllocID: id, Address: "127.0.0.1", Port: int32(8000 + i), Tags: tags, Datacenter: "dc1"}}}}})
	}
}

func TestServicesWithNomadClient(t *testing.T) {
	b := newFSMBackend()
	withServices(t, b, "default", "web", 3, "b", "a")
	withServices(t, b, "other", "db", 1, "x")
	c := nomadAgainst(t, b)

	list, _, err := c.Services().List(nil)
	require.NoError(t, err)
	require.Len(t, list, 1)
	require.Equal(t, "default", list[0].Namespace)
	require.Equal(t, "web", list[0].Services[0].ServiceName)
	require.Equal(t, []string{"a", "b"}, list[0].Services[0].Tags, "tags once each, sorted")
	all, _, err := c.Services().List(&nomad.QueryOptions{Namespace: "*"})
	require.NoError(t, err)
	require.Len(t, all, 2)
	require.Equal(t, []string{"default", "other"}, []string{all[0].Namespace, all[1].Namespace})

	regs, meta, err := c.Services().Get("web", nil)
	require.NoError(t, err)
	require.Len(t, regs, 3)
	require.NotZero(t, meta.LastIndex)
	r0 := regs[0]
	require.Equal(t, "web", r0.ServiceName)
	require.Equal(t, "n1", r0.NodeID)
	require.Equal(t, "web", r0.JobID)
	require.Equal(t, "default", r0.Namespace)
	require.Equal(t, "127.0.0.1", r0.Address)
	require.NotZero(t, r0.Port)
	require.NotZero(t, r0.CreateIndex)
	none, _, err := c.Services().Get("nope", nil)
	require.NoError(t, err)
	require.Empty(t, none)

	// ?choose: the same key picks the same registrations, every time.
	var picks [][]string
	for range 3 {
		var out []*nomad.ServiceRegistration
		_, err := c.Raw().Query("/v1/service/web?choose=2|caller-1", &out, nil)
		require.NoError(t, err)
		require.Len(t, out, 2)
		picks = append(picks, []string{out[0].ID, out[1].ID})
	}
	require.Equal(t, picks[0], picks[1])
	require.Equal(t, picks[0], picks[2])
	var bad []*nomad.ServiceRegistration
	_, err = c.Raw().Query("/v1/service/web?choose=zero|k", &bad, nil)
	requireStatus(t, err, http.StatusBadRequest)

	// Delete one by ID; a second delete, or another service's name, is a 404.
	_, err = c.Services().Delete("db", r0.ID, nil)
	requireStatus(t, err, http.StatusNotFound)
	_, err = c.Services().Delete("web", r0.ID, nil)
	require.NoError(t, err)
	_, err = c.Services().Delete("web", r0.ID, nil)
	requireStatus(t, err, http.StatusNotFound)
	regs, _, err = c.Services().Get("web", nil)
	require.NoError(t, err)
	require.Len(t, regs, 2)
}

func requireStatus(t *testing.T, err error, code int) {
	t.Helper()
	var ue nomad.UnexpectedResponseError
	require.True(t, errors.As(err, &ue), "%v", err)
	require.Equal(t, code, ue.StatusCode(), err.Error())
}
