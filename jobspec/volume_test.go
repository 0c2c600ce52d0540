package jobspec

import (
	"errors"
	"os"
	"testing"

	"github.com/stretchr/testify/require"
	"github.com/troupe-dev/troupe/messages"
	"google.golang.org/protobuf/proto"
)

const gib = int64(1) << 30

func TestParseVolumeEveryField(t *testing.T) {
	src, err := os.ReadFile("testdata/volume_full.hcl")
	require.NoError(t, err)
	v, err := ParseVolume("volume_full.hcl", src)
	require.NoError(t, err)
	want := &messages.CSIVolume{
		ID: "db1", Name: "database", Namespace: "prod", ExternalID: "vol-0abc", PluginID: "ebs",
		SnapshotID: "snap-1", RequestedCapacityMin: 10 * gib, RequestedCapacityMax: 20e9,
		RequestedCapabilities: []*messages.CSIVolumeCapability{
			{AccessMode: "single-node-writer", AttachmentMode: "file-system"},
			{AccessMode: "single-node-reader-only", AttachmentMode: "block-device"},
		},
		MountOptions: &messages.CSIMountOptions{FSType: "ext4", MountFlags: []string{"noatime", "nodev"}},
		Secrets:      map[string]string{"token": "xyzzy"},
		Parameters:   map[string]string{"skuname": "Premium_LRS", "iops": "3000"},
		Context:      map[string]string{"server": "10.0.0.1"},
		RequestedTopologies: &messages.CSITopologyRequest{
			Required: []*messages.CSITopology{
				{Segments: map[string]string{"rack": "R1", "zone": "a"}},
				{Segments: map[string]string{"rack": "R2"}},
			},
			Preferred: []*messages.CSITopology{{Segments: map[string]string{"rack": "R1"}}},
		},
	}
	requireProto(t, want, v)
	CanonicalizeVolume(v)
	require.Equal(t, "prod", v.Namespace)
	require.NoError(t, ValidateVolume(v, false))
}

func TestParseVolumeMinimalAndDefaults(t *testing.T) {
	src := "id = \"v\"\nname = \"v\"\ntype = \"csi\"\nplugin_id = \"p\"\ncapacity_min = 1048576\n" +
		"capability {\n access_mode = \"multi-node-multi-writer\"\n attachment_mode = \"file-system\"\n}\n"
	v, err := ParseVolume("v.hcl", []byte(src))
	require.NoError(t, err)
	require.Empty(t, v.Namespace)
	require.Equal(t, int64(1<<20), v.RequestedCapacityMin)
	require.Nil(t, v.MountOptions)
	require.Nil(t, v.RequestedTopologies)
	CanonicalizeVolume(v)
	require.Equal(t, "default", v.Namespace)
	again := proto.Clone(v).(*messages.CSIVolume)
	CanonicalizeVolume(again)
	requireProto(t, v, again)
	require.NoError(t, ValidateVolume(v, true), "create needs no external_id")
	require.ErrorContains(t, ValidateVolume(v, false), "external_id must be set to register a volume")
}

func TestParseVolumeErrorsCarryPosition(t *testing.T) {
	const head = "id = \"v\"\nname = \"v\"\nplugin_id = \"p\"\n" // lines 1-3
	const capab = "capability {\n access_mode = \"single-node-writer\"\n attachment_mode = \"file-system\"\n}\n"
	cases := []struct {
		name      string
		src       string
		line, col int
		contains  []string
	}{
		{"missing type", head + capab, 1, 1, []string{"Missing type", `type = "csi"`}},
		{"host type", head + "type = \"host\"\n" + capab, 4, 8, []string{"Unsupported volume type", `type "host" is not supported`}},
		{"type not a string", head + "type = [\"csi\"]\n", 4, 8, []string{"Incorrect attribute value type", `"type"`}},
		{"bad access_mode", head + "type = \"csi\"\ncapability {\n access_mode = \"rw\"\n attachment_mode = \"file-system\"\n}\n", 6, 16,
			[]string{"Invalid access_mode", `access_mode "rw" must be one of single-node-reader-only`}},
		{"bad attachment_mode", head + "type = \"csi\"\ncapability {\n access_mode = \"single-node-writer\"\n attachment_mode = \"nfs\"\n}\n", 7, 20,
			[]string{"Invalid attachment_mode", `attachment_mode "nfs" must be one of file-system, block-device`}},
		{"capability without attachment_mode", head + "type = \"csi\"\ncapability {\n access_mode = \"single-node-writer\"\n}\n", 5, 1,
			[]string{"Missing attachment_mode"}},
		{"bad size", head + "type = \"csi\"\ncapacity_min = \"ten gigs\"\n", 5, 16, []string{"Invalid size", "capacity_min", `"ten gigs"`}},
		{"bad unit", head + "type = \"csi\"\ncapacity_max = \"10XB\"\n", 5, 16, []string{"Invalid size", `unknown unit "XB"`}},
		{"unknown attribute", head + "type = \"csi\"\naccess_mode = \"single-node-writer\"\n", 5, 1, []string{"Unsupported argument", `"access_mode"`}},
		{"unknown block", head + "type = \"csi\"\nvolume {\n}\n", 5, 1, []string{"Unsupported block type", `"volume"`}},
		{"duplicate mount_options", head + "type = \"csi\"\nmount_options {\n}\nmount_options {\n}\n", 7, 1, []string{"Duplicate mount_options block"}},
		{"mount_flags not a list", head + "type = \"csi\"\nmount_options {\n mount_flags = {a = 1}\n}\n", 6, 16, []string{`"mount_flags"`}},
		{"topology without segments", head + "type = \"csi\"\ntopology_request {\n required {\n  topology {\n  }\n }\n}\n", 7, 3, []string{"Missing segments"}},
		{"empty segments", head + "type = \"csi\"\ntopology_request {\n preferred {\n  topology {\n   segments {\n   }\n  }\n }\n}\n", 8, 4, []string{"Empty segments"}},
		{"a job file", "job \"j\" {\n}\n", 1, 1, []string{"Unsupported block type", `"job"`}},
		{"syntax", head + "type = \n", 4, 8, []string{"Invalid expression"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			_, err := ParseVolume("vol.hcl", []byte(tc.src))
			require.True(t, errors.Is(err, ErrParse), "%v", err)
			var pe *ParseError
			require.ErrorAs(t, err, &pe)
			require.Equal(t, [2]int{tc.line, tc.col}, [2]int{pe.Line, pe.Column}, err.Error())
			require.Contains(t, err.Error(), "vol.hcl:")
			for _, s := range tc.contains {
				require.Contains(t, err.Error(), s)
			}
		})
	}
}

func TestParseSize(t *testing.T) {
	cases := []struct {
		in   string
		want int64
		err  string
	}{
		{"512", 512, ""},
		{"512B", 512, ""},
		{"10GiB", 10 * gib, ""},
		{"10gib", 10 * gib, ""},
		{"10 GiB", 10 * gib, ""},
		{"10Gi", 10 * gib, ""},
		{"200G", 200e9, ""},
		{"200GB", 200e9, ""},
		{"1.5KiB", 1536, ""},
		{"1.5k", 1500, ""},
		{"3MiB", 3 << 20, ""},
		{"2TB", 2e12, ""},
		{"1TiB", 1 << 40, ""},
		{"1PiB", 1 << 50, ""},
		{"7EiB", 7 << 60, ""},
		{"8EiB", 0, "too large"},
		{"-1G", 0, "is not a size"},
		{"", 0, "is not a size"},
		{"GiB", 0, "is not a size"},
		{"10 XB", 0, `unknown unit "XB"`},
	}
	for _, tc := range cases {
		t.Run(tc.in, func(t *testing.T) {
			got, err := ParseSize(tc.in)
			if tc.err != "" {
				require.ErrorContains(t, err, tc.err)
				return
			}
			require.NoError(t, err)
			require.Equal(t, tc.want, got)
		})
	}
}

func validVolume() *messages.CSIVolume {
	return &messages.CSIVolume{ID: "vol1", Name: "vol1", Namespace: "default", ExternalID: "ext1", PluginID: "hostpath",
		RequestedCapabilities: []*messages.CSIVolumeCapability{{AccessMode: "single-node-writer", AttachmentMode: "file-system"}}}
}

func TestValidateVolume(t *testing.T) {
	cases := []struct {
		name   string
		create bool
		mutate func(*messages.CSIVolume)
		want   string // empty: valid
	}{
		{"valid register", false, func(*messages.CSIVolume) {}, ""},
		{"valid create", true, func(v *messages.CSIVolume) { v.ExternalID = "" }, ""},
		{"register needs external_id", false, func(v *messages.CSIVolume) { v.ExternalID = "" }, "external_id must be set to register a volume"},
		{"no id", false, func(v *messages.CSIVolume) { v.ID = "" }, "id must not be empty"},
		{"space in id", false, func(v *messages.CSIVolume) { v.ID = "a b" }, `id "a b" must not contain spaces`},
		{"slash in id", true, func(v *messages.CSIVolume) { v.ID = "a/b" }, `id "a/b" must not contain a slash`},
		{"no name", true, func(v *messages.CSIVolume) { v.Name = "" }, "name must not be empty"},
		{"no namespace", true, func(v *messages.CSIVolume) { v.Namespace = "" }, "namespace must not be empty"},
		{"no plugin_id", true, func(v *messages.CSIVolume) { v.PluginID = "" }, "plugin_id must not be empty"},
		{"no capability", true, func(v *messages.CSIVolume) { v.RequestedCapabilities = nil }, "capability: at least one capability block is required"},
		{"nil capability", true, func(v *messages.CSIVolume) { v.RequestedCapabilities[0] = nil }, "capability[0]: is missing"},
		{"empty access_mode", true, func(v *messages.CSIVolume) { v.RequestedCapabilities[0].AccessMode = "" }, "capability[0]: access_mode must be set"},
		{"bad access_mode", true, func(v *messages.CSIVolume) { v.RequestedCapabilities[0].AccessMode = "rw" }, `capability[0]: access_mode "rw" must be one of single-node-reader-only, single-node-writer, multi-node-reader-only, multi-node-single-writer, multi-node-multi-writer`},
		{"empty attachment_mode", true, func(v *messages.CSIVolume) { v.RequestedCapabilities[0].AttachmentMode = "" }, "capability[0]: attachment_mode must be set"},
		{"bad attachment_mode", true, func(v *messages.CSIVolume) {
			v.RequestedCapabilities = append(v.RequestedCapabilities, &messages.CSIVolumeCapability{AccessMode: "multi-node-multi-writer", AttachmentMode: "nfs"})
		}, `capability[1]: attachment_mode "nfs" must be file-system or block-device`},
		{"negative capacity", true, func(v *messages.CSIVolume) { v.RequestedCapacityMin = -1 }, "capacity_min must not be negative"},
		{"max below min", true, func(v *messages.CSIVolume) { v.RequestedCapacityMin, v.RequestedCapacityMax = 10, 5 },
			"capacity_max (5 bytes) must not be less than capacity_min (10 bytes)"},
		{"min without max", true, func(v *messages.CSIVolume) { v.RequestedCapacityMin = 10 }, ""},
		{"snapshot and clone", true, func(v *messages.CSIVolume) { v.SnapshotID, v.CloneID = "s", "c" }, "only one of snapshot_id and clone_id may be set"},
		{"empty required topology", true, func(v *messages.CSIVolume) {
			v.RequestedTopologies = &messages.CSITopologyRequest{Required: []*messages.CSITopology{{}}}
		}, "topology_request.required: topology[0]: segments must not be empty"},
		{"nil preferred topology", true, func(v *messages.CSIVolume) {
			v.RequestedTopologies = &messages.CSITopologyRequest{Preferred: []*messages.CSITopology{nil}}
		}, "topology_request.preferred: topology[0]: segments must not be empty"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			v := validVolume()
			tc.mutate(v)
			err := ValidateVolume(v, tc.create)
			if tc.want == "" {
				require.NoError(t, err)
				return
			}
			require.True(t, errors.Is(err, ErrInvalid))
			var ve *ValidationError
			require.ErrorAs(t, err, &ve)
			require.True(t, hasPrefixed(ve.Problems, tc.want), "want a problem starting %q, got:\n%s", tc.want, err)
		})
	}
	require.ErrorIs(t, ValidateVolume(nil, true), ErrInvalid)
}
