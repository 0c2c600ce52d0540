package state

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/troupe-dev/troupe/messages"
)

func TestApplyUpsertPluginInstances(t *testing.T) {
	plugins := map[string]*messages.CSIPlugin{}
	ctrl := &messages.CSIInfo{PluginID: "hostpath", Healthy: true, RequiresControllerPlugin: true,
		Provider: "troupe.hostpath", ProviderVersion: "0.1.0"}
	node := &messages.CSIInfo{PluginID: "hostpath", Healthy: false, RequiresControllerPlugin: true}
	got := ApplyUpsertPluginInstances(plugins, &messages.UpsertPluginInstances{NodeID: "n1",
		Controllers: []*messages.CSIInfo{ctrl}, Nodes: []*messages.CSIInfo{node}})
	require.Equal(t, []string{"hostpath"}, got)
	p := plugins["hostpath"]
	require.True(t, p.GetControllerRequired())
	require.Equal(t, "troupe.hostpath", p.GetProvider())
	require.EqualValues(t, 1, p.GetControllersHealthy())
	require.EqualValues(t, 0, p.GetNodesHealthy())
	require.EqualValues(t, 1, p.GetNodesExpected())

	vol := testVolume("v", false)
	WithPluginHealth(vol, p)
	require.False(t, vol.GetSchedulable(), "no healthy node instance")
	require.True(t, vol.GetControllerRequired())

	healthyNode := &messages.CSIInfo{PluginID: "hostpath", Healthy: true, RequiresControllerPlugin: true}
	ApplyUpsertPluginInstances(plugins, &messages.UpsertPluginInstances{NodeID: "n2", Nodes: []*messages.CSIInfo{healthyNode}})
	WithPluginHealth(vol, plugins["hostpath"])
	require.True(t, vol.GetSchedulable())
	require.EqualValues(t, 2, vol.GetNodesExpected())

	got = ApplyUpsertPluginInstances(plugins, &messages.UpsertPluginInstances{NodeID: "n1"})
	require.Equal(t, []string{"hostpath"}, got)
	require.Empty(t, plugins["hostpath"].GetControllers(), "n1's instances replaced by none")
	WithPluginHealth(vol, plugins["hostpath"])
	require.False(t, vol.GetSchedulable(), "controller required, none healthy")

	ApplyUpsertPluginInstances(plugins, &messages.UpsertPluginInstances{NodeID: "n2"})
	require.NotContains(t, plugins, "hostpath", "a plugin with no instance is deleted")
	WithPluginHealth(vol, nil)
	require.False(t, vol.GetSchedulable())
}
