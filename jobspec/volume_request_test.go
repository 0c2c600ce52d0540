package jobspec

import (
	"testing"

	"github.com/stretchr/testify/require"
	"github.com/troupe-dev/troupe/messages"
)

// TestValidateGroupVolumes covers the rules for a group's volume blocks.
func TestValidateGroupVolumes(t *testing.T) {
	csi := func(mode string) *messages.VolumeRequest {
		return &messages.VolumeRequest{Name: "data", Type: "csi", Source: "vol1",
			AccessMode: mode, AttachmentMode: "file-system"}
	}
	const at = `group "g": volume "data": `
	cases := []struct {
		name  string
		count int32
		vol   *messages.VolumeRequest
		want  string // empty: valid
	}{
		{"csi single-node-writer", 1, csi("single-node-writer"), ""},
		{"csi multi-node-multi-writer count 3", 3, csi("multi-node-multi-writer"), ""},
		{"csi block-device", 1, &messages.VolumeRequest{Type: "csi", Source: "v", AccessMode: "single-node-writer", AttachmentMode: "block-device"}, ""},
		{"csi no access_mode", 1, csi(""), at + "access_mode must be set for csi volumes"},
		{"csi bad access_mode", 1, csi("rw"), at + `access_mode "rw" must be one of single-node-reader-only, single-node-writer`},
		{"csi no attachment_mode", 1, &messages.VolumeRequest{Type: "csi", Source: "v", AccessMode: "single-node-writer"}, at + "attachment_mode must be set for csi volumes"},
		{"csi bad attachment_mode", 1, &messages.VolumeRequest{Type: "csi", Source: "v", AccessMode: "single-node-writer", AttachmentMode: "nfs"}, at + `attachment_mode "nfs" must be file-system or block-device`},
		{"reader-only needs read_only", 1, csi("single-node-reader-only"), at + `access_mode "single-node-reader-only" needs read_only = true`},
		{"multi reader needs read_only", 2, csi("multi-node-reader-only"), at + `access_mode "multi-node-reader-only" needs read_only = true`},
		{"reader-only read_only", 2, withRO(csi("multi-node-reader-only")), ""},
		{"single writer count 2", 2, csi("single-node-writer"), at + `access_mode "single-node-writer" allows one allocation; count 2 needs per_alloc = true`},
		{"single writer per_alloc", 2, withPerAlloc(csi("single-node-writer")), ""},
		{"multi single writer count 2", 2, csi("multi-node-single-writer"), at + `access_mode "multi-node-single-writer" allows one writer`},
		{"multi single writer read_only", 2, withRO(csi("multi-node-single-writer")), ""},
		{"csi per_alloc", 1, withPerAlloc(csi("single-node-writer")), ""},
		{"no source", 1, &messages.VolumeRequest{Type: "csi", AccessMode: "single-node-writer", AttachmentMode: "file-system"}, at + "source must not be empty"},
		{"unknown type", 1, &messages.VolumeRequest{Type: "nfs", Source: "v"}, at + `type "nfs" must be "csi" or "host"`},
		{"host", 2, &messages.VolumeRequest{Type: "host", Source: "scratch"}, ""},
		{"host per_alloc", 1, &messages.VolumeRequest{Type: "host", Source: "scratch", PerAlloc: true}, at + "per_alloc is only for csi volumes"},
		{"host access_mode", 1, &messages.VolumeRequest{Type: "host", Source: "scratch", AccessMode: "single-node-writer"}, at + "access_mode is only for csi volumes"},
		{"host attachment_mode", 1, &messages.VolumeRequest{Type: "host", Source: "scratch", AttachmentMode: "file-system"}, at + "attachment_mode is only for csi volumes"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			job := validJob(t)
			g := job.TaskGroups[0]
			g.Count = tc.count
			g.Volumes = map[string]*messages.VolumeRequest{"data": tc.vol}
			err := Validate(job)
			if tc.want == "" {
				require.NoError(t, err)
				return
			}
			var ve *ValidationError
			require.ErrorAs(t, err, &ve)
			require.True(t, hasPrefixed(ve.Problems, tc.want), "want a problem starting %q, got:\n%s", tc.want, err)
		})
	}
}

func withRO(v *messages.VolumeRequest) *messages.VolumeRequest {
	v.ReadOnly = true
	return v
}

func withPerAlloc(v *messages.VolumeRequest) *messages.VolumeRequest {
	v.PerAlloc = true
	return v
}

// TestParseGroupVolumeHCLThenValidate checks the rules on parsed HCL: a csi
// volume without modes is parsed but rejected by Validate.
func TestParseGroupVolumeHCLThenValidate(t *testing.T) {
	job := canonicalJob(t, "", "volume \"data\" {\n type = \"csi\"\n source = \"vol1\"\n per_alloc = true\n}", "")
	requireProto(t, &messages.VolumeRequest{Name: "data", Type: "csi", Source: "vol1", PerAlloc: true},
		job.TaskGroups[0].Volumes["data"])
	var ve *ValidationError
	require.ErrorAs(t, Validate(job), &ve)
	require.Len(t, ve.Problems, 2)
	require.Contains(t, ve.Problems[0], `group "g": volume "data": access_mode must be set`)
	require.Contains(t, ve.Problems[1], `group "g": volume "data": attachment_mode must be set`)
}
