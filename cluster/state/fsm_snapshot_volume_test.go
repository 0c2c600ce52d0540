package state

import (
	"bytes"
	"fmt"
	"io"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/troupe-dev/troupe/messages"
)

func TestSnapshotRoundTripVolumesAndPlugins(t *testing.T) {
	tests := []struct {
		name    string
		volumes int
	}{
		{"small", 3},
		{"several chunks", 2*snapshotChunk + 5},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h := seedStore(t)
			require.Nil(t, h.apply(upsertPlugins("n1", []*messages.CSIInfo{testInstance("hostpath", true)},
				[]*messages.CSIInfo{testInstance("hostpath", true), testInstance("other", false)})))
			var ids []string
			for i := range tt.volumes {
				id := fmt.Sprintf("v%05d", i)
				ids = append(ids, id)
				vol := testVolume(id, true)
				if i%2 == 1 {
					vol.Namespace, vol.PluginID = "prod", "other"
				}
				require.Nil(t, h.apply(registerVolume(vol)))
			}
			require.Nil(t, h.apply(claimVolume("v00000", testClaim("a1", "n1", ModeWrite, messages.CSIAccessSingleNodeWriter))))
			require.Nil(t, h.apply(claimVolume("v00000", testClaim("a2", "n1", ModeRead, messages.CSIAccessSingleNodeWriter))))
			require.Nil(t, h.apply(updateClaim("v00000", "a2", ClaimUnpublishing)))

			sink := persist(t, h.fsm)
			restored := NewFSM(NewStore(), nil)
			restored.SetClock(func() time.Time { return time.Unix(0, testNow) })
			var events []Event
			restored.OnApply(func(ev Event) { events = append(events, ev) })
			require.NoError(t, restored.Restore(io.NopCloser(bytes.NewReader(sink.Bytes()))))

			got := restored.Store().Snapshot()
			requireSameState(t, h.snap(), got)
			require.Len(t, got.CSIVolumes(), tt.volumes)
			require.Equal(t, map[string]string{"a1": "taken", "a2": "unpublishing"}, claimStates(got.CSIVolumeAnyNamespace("v00000")))
			require.Equal(t, h.index, got.Index(TableCSIVolumes), "tables restored at the snapshot's index")
			require.Len(t, events, 1)
			require.Equal(t, ids, events[0].VolumesChanged, "a new leader learns of every volume")
			require.Equal(t, []string{"hostpath", "other"}, events[0].PluginsChanged)

			res := restored.Apply(rawLog(h.index+1, mustMarshal(t, updateClaim("v00000", "a2", ClaimNodeDetached))))
			require.Nil(t, res, "the restored FSM carries on with the claims")
			require.Equal(t, "node-detached", claimStates(restored.Store().Snapshot().CSIVolumeAnyNamespace("v00000"))["a2"])
			res = restored.Apply(rawLog(h.index+2, mustMarshal(t, claimVolume("v00000", testClaim("a3", "n2", ModeRead, messages.CSIAccessSingleNodeWriter)))))
			require.ErrorIs(t, res.(error), ErrClaimConflict, "and with their slots")
		})
	}
}
