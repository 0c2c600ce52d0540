//go:build linux

package agent

import (
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"github.com/troupe-dev/troupe/ui/uitest"
)

// TestUIVolumeClaimStates: the CSI volumes page follows a stopped job's
// claim through its states as the real hostpath plugin releases it. The
// plugin holds NodeUnpublish, then ControllerUnpublish, so that the page
// shows taken, unpublishing and node-detached in turn, then no claim once
// it is freed; the plugins page shows the plugin healthy.
func TestUIVolumeClaimStates(t *testing.T) {
	e := startPluginJob(t, testConfig(t, t.TempDir()))
	e.create(t, "vol0")
	jobID := e.run(t, volumeJob("app", 1, false, "vol0"))
	e.waitRunning(t, jobID, 1)
	base := "http://" + e.a.HTTPAddr()
	b := uitest.Start(t)

	b.Open(t, base+"/ui/csi/plugins")
	b.WaitFor(t, `document.querySelector('[data-section=plugins]').innerText.includes('hostpath')`, 10*time.Second)
	b.WaitFor(t, `document.querySelector('[data-section=plugins]').innerText.includes('1/1')`, 10*time.Second)
	b.Screenshot(t, "plugins")

	state := func(s string) string {
		return fmt.Sprintf(`document.querySelector('[data-volume="vol0"] [data-claim-state=%q]')`, s)
	}
	b.Open(t, base+"/ui/csi/volumes")
	b.WaitFor(t, state("taken"), 10*time.Second)
	b.Screenshot(t, "volumes-taken")

	ext := e.volume("vol0").GetExternalID()
	require.NoError(t, e.ctl.Hang(t.Context(), "NodeUnpublishVolume", ext))
	require.NoError(t, e.ctl.Hang(t.Context(), "ControllerUnpublishVolume", ext))
	_, _, err := e.c.Jobs().Deregister(jobID, false, nil)
	require.NoError(t, err)
	b.WaitFor(t, state("unpublishing"), 30*time.Second)
	b.Screenshot(t, "volumes-unpublishing")

	require.NoError(t, e.ctl.Release(t.Context(), "NodeUnpublishVolume", ext))
	b.WaitFor(t, state("node-detached"), 30*time.Second)
	b.Screenshot(t, "volumes-node-detached")

	require.NoError(t, e.ctl.Release(t.Context(), "ControllerUnpublishVolume", ext))
	e.waitFreed(t, "vol0")
	b.WaitFor(t, `document.querySelector('[data-volume="vol0"]')?.innerText.includes('No claims.')`, 30*time.Second)
	b.Screenshot(t, "volumes-freed")
}
