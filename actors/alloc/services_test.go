package alloc

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/troupe-dev/troupe/messages"
)

func servicesAlloc() *messages.Allocation {
	return &messages.Allocation{
		ID: "a1", Namespace: "default", JobID: "web", NodeID: "n1", TaskGroup: "g",
		NetworkStatus: &messages.NetworkStatus{Address: "172.26.64.5"},
		AllocatedResources: &messages.AllocatedResources{Shared: &messages.AllocatedSharedResources{
			Networks: []*messages.NetworkResource{{DynamicPorts: []*messages.Port{{Label: "http", Value: 23456, To: 8080}}}}}},
		Job: &messages.Job{ID: "web", Name: "web", TaskGroups: []*messages.TaskGroup{{
			Name: "g",
			Services: []*messages.Service{{Name: "${NOMAD_JOB_NAME}-api", PortLabel: "http", AddressMode: "host",
				Tags: []string{"v1", "${node.datacenter}"}, CanaryTags: []string{"canary"}}},
			Tasks: []*messages.Task{{Name: "t", Services: []*messages.Service{
				{Name: "web-t", PortLabel: "http", AddressMode: "alloc"},
				{Name: "web-fixed", PortLabel: "9999", AddressMode: "auto"},
				{Name: "other", Provider: "consul"},
			}}},
		}}},
	}
}

func TestRegistrations(t *testing.T) {
	a := servicesAlloc()
	node := &messages.Node{ID: "n1", Datacenter: "dc1", Attributes: map[string]string{nodeIPAttribute: "10.0.0.7"}}
	r := func(string) refs { return refs{env: map[string]string{"NOMAD_JOB_NAME": "web"}, node: node} }
	regs := registrations(a, node, r, false)
	require.Len(t, regs, 3, "the consul service is not troupe's")
	api := regs[0]
	require.Equal(t, "web-api", api.ServiceName, "the name is interpolated")
	require.Equal(t, "_nomad-task-a1-group-g-web-api-http", api.ID)
	require.Equal(t, []string{"v1", "dc1"}, api.Tags)
	require.Equal(t, "10.0.0.7", api.Address, "host mode: the node's address")
	require.Equal(t, int32(23456), api.Port, "and the host port")
	require.Equal(t, "dc1", api.Datacenter)
	require.Equal(t, "_nomad-task-a1-t-web-t-http", regs[1].ID)
	require.Equal(t, "172.26.64.5", regs[1].Address, "alloc mode: the allocation's address")
	require.Equal(t, int32(8080), regs[1].Port, "and the task's port")
	require.Equal(t, "10.0.0.7", regs[2].Address)
	require.Equal(t, int32(9999), regs[2].Port, "a numeric port is that port")
	require.Equal(t, []string{"canary"}, registrations(a, node, r, true)[0].Tags)

	bare := registrations(a, &messages.Node{}, nil, false)
	require.Equal(t, "${NOMAD_JOB_NAME}-api", bare[0].ServiceName, "no refs: as written")
	require.Equal(t, "127.0.0.1", bare[0].Address, "a node without an address attribute: loopback")
}
