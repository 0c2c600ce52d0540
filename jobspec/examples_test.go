package jobspec

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

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

func TestEveryExampleParsesAndValidates(t *testing.T) {
	entries, err := os.ReadDir(examplesDir)
	require.NoError(t, err)
	var n int
	for _, e := range entries {
		if e.IsDir() || !(strings.HasSuffix(e.Name(), ".hcl") || strings.HasSuffix(e.Name(), ".json")) {
			continue
		}
		n++
		t.Run(e.Name(), func(t *testing.T) {
			job := loadExample(t, e.Name())
			require.NotEmpty(t, job.ID)
			require.NotEmpty(t, job.TaskGroups)
		})
	}
	require.GreaterOrEqual(t, n, 4, "examples/ lost files")
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
	for _, name := range []string{"hello.hcl", "batch.hcl", "hello.json"} {
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
