package agent

import (
	"bytes"
	"io"
	"net/http"
	"testing"

	nomad "github.com/hashicorp/nomad/api"
	"github.com/stretchr/testify/require"
)

// TestCSIVolumeRegistration drives the volume endpoints with Nomad's own
// client: register, list, read, deregister; bad specs change nothing.
func TestCSIVolumeRegistration(t *testing.T) {
	a := startAgent(t, testConfig(t, t.TempDir()))
	defer a.Shutdown()
	c, err := nomad.NewClient(&nomad.Config{Address: "http://" + a.HTTPAddr()})
	require.NoError(t, err)

	vol := &nomad.CSIVolume{ID: "vol1", Name: "vol1", ExternalID: "ext-1", PluginID: "hostpath",
		RequestedCapabilities: []*nomad.CSIVolumeCapability{{AccessMode: "single-node-writer", AttachmentMode: "file-system"}}}
	_, err = c.CSIVolumes().Register(vol, nil)
	require.NoError(t, err)

	list, _, err := c.CSIVolumes().List(nil)
	require.NoError(t, err)
	require.Len(t, list, 1)
	require.Equal(t, "hostpath", list[0].PluginID)
	got, _, err := c.CSIVolumes().Info("vol1", nil)
	require.NoError(t, err)
	require.Equal(t, "ext-1", got.ExternalID)
	require.Len(t, got.RequestedCapabilities, 1)
	require.False(t, got.Schedulable, "no healthy plugin yet")
	plugins, _, err := c.CSIPlugins().List(nil)
	require.NoError(t, err)
	require.Empty(t, plugins)

	before := a.Store().Snapshot().Index()
	for _, bad := range []struct {
		body, says string
	}{
		{`{"Volumes":[{"ID":"vol2","Name":"vol2","ExternalID":"e"}]}`, "plugin_id"},
		{`{"Volumes":[{"ID":"vol2","Name":"vol2","PluginID":"p","ExternalID":"e","RequestedCapabilities":[{"AccessMode":"everyone","AttachmentMode":"file-system"}]}]}`, "everyone"},
		{`{"Volumes":[{"ID":"vol2",}]}`, "line 1"},
	} {
		req, err := http.NewRequest("PUT", "http://"+a.HTTPAddr()+"/v1/volume/csi/vol2", bytes.NewBufferString(bad.body))
		require.NoError(t, err)
		resp, err := http.DefaultClient.Do(req)
		require.NoError(t, err)
		msg, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		require.Equal(t, 400, resp.StatusCode, string(msg))
		require.Contains(t, string(msg), bad.says)
	}
	require.Equal(t, before, a.Store().Snapshot().Index(), "bad specs changed the state")
	_, _, err = c.CSIVolumes().Info("nope", nil)
	require.ErrorContains(t, err, "404")

	require.NoError(t, c.CSIVolumes().Deregister("vol1", false, nil))
	list, _, err = c.CSIVolumes().List(nil)
	require.NoError(t, err)
	require.Empty(t, list)
}
