package csi

import (
	"testing"

	csipb "github.com/container-storage-interface/spec/lib/go/csi"
	"github.com/stretchr/testify/require"
	"github.com/troupe-dev/troupe/messages"
)

func TestAccessModeMapping(t *testing.T) {
	cases := []struct {
		mode string
		want csipb.VolumeCapability_AccessMode_Mode
	}{
		{messages.CSIAccessSingleNodeReader, csipb.VolumeCapability_AccessMode_SINGLE_NODE_READER_ONLY},
		{messages.CSIAccessSingleNodeWriter, csipb.VolumeCapability_AccessMode_SINGLE_NODE_WRITER},
		{messages.CSIAccessMultiNodeReader, csipb.VolumeCapability_AccessMode_MULTI_NODE_READER_ONLY},
		{messages.CSIAccessMultiNodeSingleWriter, csipb.VolumeCapability_AccessMode_MULTI_NODE_SINGLE_WRITER},
		{messages.CSIAccessMultiNodeMultiWriter, csipb.VolumeCapability_AccessMode_MULTI_NODE_MULTI_WRITER},
	}
	require.Len(t, AccessModes(), len(cases))
	for _, tc := range cases {
		t.Run(tc.mode, func(t *testing.T) {
			got, err := AccessModeToCSI(tc.mode)
			require.NoError(t, err)
			require.Equal(t, tc.want, got)
			back, err := AccessModeFromCSI(got)
			require.NoError(t, err)
			require.Equal(t, tc.mode, back)
		})
	}
}

func TestUnknownModes(t *testing.T) {
	for _, mode := range []string{"", "single-node", "SINGLE-NODE-WRITER", "rw"} {
		t.Run("access "+mode, func(t *testing.T) {
			_, err := AccessModeToCSI(mode)
			require.ErrorIs(t, err, ErrUnknownAccessMode)
			require.Contains(t, err.Error(), `"`+mode+`"`)
		})
		t.Run("attachment "+mode, func(t *testing.T) {
			c := &VolumeCapability{AccessMode: messages.CSIAccessSingleNodeWriter, AttachmentMode: mode}
			_, err := c.ToCSI()
			require.ErrorIs(t, err, ErrUnknownAttachmentMode)
			require.Contains(t, err.Error(), `"`+mode+`"`)
		})
	}
	for _, m := range []csipb.VolumeCapability_AccessMode_Mode{
		csipb.VolumeCapability_AccessMode_UNKNOWN,
		csipb.VolumeCapability_AccessMode_SINGLE_NODE_SINGLE_WRITER,
		csipb.VolumeCapability_AccessMode_SINGLE_NODE_MULTI_WRITER,
	} {
		t.Run("from "+m.String(), func(t *testing.T) {
			_, err := AccessModeFromCSI(m)
			require.ErrorIs(t, err, ErrUnknownAccessMode)
			require.Contains(t, err.Error(), m.String())
		})
	}
}

func TestCapabilityRoundTrip(t *testing.T) {
	for _, access := range AccessModes() {
		for _, attach := range AttachmentModes() {
			t.Run(access+"/"+attach, func(t *testing.T) {
				in := &VolumeCapability{AccessMode: access, AttachmentMode: attach}
				if attach == messages.CSIAttachFileSystem {
					in.FSType, in.MountFlags = "ext4", []string{"noatime", "ro"}
				}
				pc, err := in.ToCSI()
				require.NoError(t, err)
				if attach == messages.CSIAttachBlockDevice {
					require.NotNil(t, pc.GetBlock())
				} else {
					require.Equal(t, "ext4", pc.GetMount().GetFsType())
					require.Equal(t, []string{"noatime", "ro"}, pc.GetMount().GetMountFlags())
				}
				out, err := CapabilityFromCSI(pc)
				require.NoError(t, err)
				require.Equal(t, in, out)
			})
		}
	}
	t.Run("nil", func(t *testing.T) {
		pc, err := (*VolumeCapability)(nil).ToCSI()
		require.NoError(t, err)
		require.Nil(t, pc)
	})
	t.Run("no access type", func(t *testing.T) {
		_, err := CapabilityFromCSI(&csipb.VolumeCapability{AccessMode: &csipb.VolumeCapability_AccessMode{
			Mode: csipb.VolumeCapability_AccessMode_SINGLE_NODE_WRITER}})
		require.ErrorIs(t, err, ErrUnknownAttachmentMode)
	})
}
