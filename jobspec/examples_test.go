package jobspec

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"github.com/troupe-dev/troupe/messages"
	"google.golang.org/protobuf/proto"
)

const examplesDir = "../examples"

// loadExample parses, canonicalizes and validates an example file.
func loadExample(t *testing.T, name string) *messages.Job {
	t.Helper()
	src, err := os.ReadFile(filepath.Join(examplesDir, name))
	require.NoError(t, err)
	var job *messages.Job
	if strings.HasSuffix(name, ".json") {
		job, err = ParseJSON(src)
	} else {
		job, err = Parse(name, src)
	}
	require.NoError(t, err)
	Canonicalize(job)
	require.NoError(t, Validate(job))
	return job
}

// isVolumeSpec tells volume specification files (volume*.hcl, for troupe
// volume create/register) from job files.
func isVolumeSpec(name string) bool {
	return strings.HasPrefix(filepath.Base(name), "volume") && strings.HasSuffix(name, ".hcl")
}

// loadVolumeExample parses, canonicalizes and validates a volume
// specification: as a register when it names an external_id, else as a
// create.
func loadVolumeExample(t *testing.T, name string) *messages.CSIVolume {
	t.Helper()
	src, err := os.ReadFile(filepath.Join(examplesDir, name))
	require.NoError(t, err)
	v, err := ParseVolume(name, src)
	require.NoError(t, err)
	CanonicalizeVolume(v)
	require.NoError(t, ValidateVolume(v, v.ExternalID == ""))
	return v
}

// exampleFiles lists the .hcl and .json files under examples/, with
// paths relative to it.
func exampleFiles(t *testing.T) []string {
	t.Helper()
	var out []string
	err := filepath.WalkDir(examplesDir, func(path string, e os.DirEntry, err error) error {
		if err != nil || e.IsDir() {
			return err
		}
		if strings.HasSuffix(path, ".hcl") || strings.HasSuffix(path, ".json") {
			rel, err := filepath.Rel(examplesDir, path)
			out = append(out, rel)
			return err
		}
		return nil
	})
	require.NoError(t, err)
	return out
}

func TestEveryExampleParsesAndValidates(t *testing.T) {
	files := exampleFiles(t)
	for _, name := range files {
		t.Run(name, func(t *testing.T) {
			if isVolumeSpec(name) {
				require.NotEmpty(t, loadVolumeExample(t, name).ID)
				return
			}
			job := loadExample(t, name)
			require.NotEmpty(t, job.ID)
			require.NotEmpty(t, job.TaskGroups)
		})
	}
	require.GreaterOrEqual(t, len(files), 7, "examples/ lost files")
}

func TestExampleContents(t *testing.T) {
	hello := loadExample(t, "hello.hcl")
	require.Equal(t, "hello", hello.ID)
	require.Equal(t, TypeService, hello.Type)
	require.Len(t, hello.TaskGroups, 1)
	require.EqualValues(t, 1, hello.TaskGroups[0].Count)
	task := hello.TaskGroups[0].Tasks[0]
	require.Equal(t, "exec", task.Driver)
	require.EqualValues(t, 100, task.Resources.CPU)
	require.EqualValues(t, 64, task.Resources.MemoryMB)

	batch := loadExample(t, "batch.hcl")
	require.Equal(t, TypeBatch, batch.Type)

	big := loadExample(t, "too-big.hcl")
	require.EqualValues(t, 10000000, big.TaskGroups[0].Tasks[0].Resources.MemoryMB)
}

func TestHelloJSONMatchesHelloHCL(t *testing.T) {
	fromHCL := loadExample(t, "hello.hcl")
	fromJSON := loadExample(t, "hello.json")
	require.True(t, proto.Equal(fromHCL, fromJSON), "hcl:\n%v\njson:\n%v", fromHCL, fromJSON)
}

// TestExampleShellScriptsAreValid runs `sh -n` on every exec task that
// starts /bin/sh -c, so a quoting slip in an example fails here.
func TestExampleShellScriptsAreValid(t *testing.T) {
	sh, err := exec.LookPath("sh")
	if err != nil {
		t.Skip("no sh on this host")
	}
	for _, name := range []string{"hello.hcl", "batch.hcl", "hello.json", "csi/app.hcl"} {
		t.Run(name, func(t *testing.T) {
			task := loadExample(t, name).TaskGroups[0].Tasks[0]
			require.Equal(t, "/bin/sh", task.Config.Fields["command"].GetStringValue())
			args := task.Config.Fields["args"].GetListValue().GetValues()
			require.Len(t, args, 2)
			require.Equal(t, "-c", args[0].GetStringValue())
			out, err := exec.Command(sh, "-n", "-c", args[1].GetStringValue()).CombinedOutput()
			require.NoError(t, err, string(out))
		})
	}
}

// TestCSIExamplesFitTogether checks that the plugin, the volume and the
// app name each other consistently.
func TestCSIExamplesFitTogether(t *testing.T) {
	plugin := loadExample(t, "csi/hostpath-plugin.hcl")
	require.Equal(t, TypeSystem, plugin.Type)
	task := plugin.TaskGroups[0].Tasks[0]
	requireProto(t, &messages.CSIPluginConfig{ID: "hostpath", Type: PluginMonolith, MountDir: "/csi",
		StagePublishBaseDir: "/local/csi", HealthTimeout: ns(30 * time.Second)}, task.CSIPluginConfig)
	require.Equal(t, "/bin/sh", task.Config.Fields["command"].GetStringValue())
	args := task.Config.AsMap()["args"].([]any)
	require.Len(t, args, 2)
	require.Contains(t, args[1], `exec troupe-csi-hostpath -endpoint "$CSI_ENDPOINT"`)
	require.Contains(t, args[1], "-mode monolith")

	vol := loadVolumeExample(t, "csi/volume.hcl")
	require.Equal(t, task.CSIPluginConfig.ID, vol.PluginID)
	requireProto(t, &messages.CSIVolumeCapability{AccessMode: messages.CSIAccessSingleNodeWriter, AttachmentMode: messages.CSIAttachFileSystem},
		vol.RequestedCapabilities[0])

	app := loadExample(t, "csi/app.hcl")
	g := app.TaskGroups[0]
	requireProto(t, &messages.VolumeRequest{Name: "data", Type: VolumeTypeCSI, Source: vol.ID,
		AccessMode: messages.CSIAccessSingleNodeWriter, AttachmentMode: messages.CSIAttachFileSystem}, g.Volumes["data"])
	requireProto(t, &messages.VolumeMount{Volume: "data", Destination: "/data"}, g.Tasks[0].VolumeMounts[0])
	require.Contains(t, g.Tasks[0].Config.AsMap()["args"], any("-c"))
}
