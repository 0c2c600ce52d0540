package jobspec

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
	"github.com/troupe-dev/troupe/messages"
)

// acceptedJobIsSafe checks what every job that passes Validate must hold,
// whatever the input: names the client can use as path elements.
func acceptedJobIsSafe(t *testing.T, job *messages.Job) {
	require.Empty(t, idProblem(job.GetID(), DefaultMaxNameLength), "id %q", job.GetID())
	var total int64
	for _, g := range job.GetTaskGroups() {
		require.NotNil(t, g)
		require.Empty(t, nameProblem(g.GetName(), DefaultMaxNameLength), "group %q", g.GetName())
		total += int64(g.GetCount())
		for _, tk := range g.GetTasks() {
			require.NotNil(t, tk)
			require.Empty(t, nameProblem(tk.GetName(), DefaultMaxNameLength), "task %q", tk.GetName())
		}
		for name := range g.GetVolumes() {
			require.Empty(t, nameProblem(name, DefaultMaxNameLength), "volume %q", name)
		}
	}
	require.LessOrEqual(t, total, int64(DefaultJobMaxCount))
}

// jsonSeeds are the hostile-input findings and a valid job.
var jsonSeeds = []string{
	`{"Job":{"ID":"ok","TaskGroups":[{"Name":"g","Count":1,"Tasks":[{"Name":"t","Driver":"exec","Config":{"command":"/bin/true"},"Resources":{"CPU":100,"MemoryMB":32}}]}]}}`,
	`{"Job":{"ID":"x","TaskGroups":[null]}}`,
	`{"Job":{"ID":"x","TaskGroups":[{"Name":"g","Tasks":[null]}]}}`,
	`{"Job":{"ID":"x","TaskGroups":[{"Name":"g","Count":1000000000,"Tasks":[{"Name":"t","Driver":"exec","Config":{"command":"a"}}]}]}}`,
	`{"Job":{"ID":"x","TaskGroups":[{"Name":"g","Tasks":[{"Name":"../../../../tmp/x-escaped-task","Driver":"exec","Config":{"command":"a"}}]}]}}`,
	`{"Job":{"ID":"x","TaskGroups":[{"Name":"..","Tasks":[{"Name":"..","Driver":"exec","Config":{"command":"a"}}]}]}}`,
	`{"Job":{"ID":"a\nb\tc","Name":"\u0000"}}`,
	"{\"Job\":{\"ID\":\"\xff\xfe\"}}",
	`{"Job":{"ID":"a","ID":"b"}}`,
	`{"Job":{"ID":"a"}} trailing`,
	`{"Job":{"ID":"a","Type":"","Name":"","Update":{"MaxParallel":-1},"Affinities":[{"Weight":500}]}}`,
	`{"Job":{"ID":"a","TaskGroups":[{"Name":"g","Spreads":[{"SpreadTarget":[{"Percent":150}]}],"EphemeralDisk":{"SizeMB":-1}}]}}`,
	`[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]`,
	`{"Job":{"ID":"a","TaskGroups":[{"Name":"g","Tasks":[{"Name":"t","Config":{"a":{"b":{"c":[1,[2,[3]]]}}}}]}]}}`,
}

// hclSeeds are the HCL forms of the findings, examples/ and testdata/.
func hclSeeds(f *testing.F) {
	for _, s := range []string{
		groupFile(`count = 1`),
		groupFile("count = " + strings.Repeat("[", 70) + strings.Repeat("]", 70)),
		groupFile("count = " + strings.Repeat("-", 300) + "1"),
		groupFile("count = " + strings.Repeat("(", 70) + "1" + strings.Repeat(")", 70)),
		groupFile(`task "../../../../tmp/x-escaped-task" { driver = "exec" }`),
		groupFile(`task ".." { driver = "exec" }`),
		groupFile(`count = 1000000000`),
		"job \"a\\nb\" {\n  group \"g\" {}\n}\n",
		"job \"x\" {\n  meta { a = \"${\"${\"${1}\"}\"}\" }\n}\n",
		groupFile(`meta { a = "` + strings.Repeat("%{if true}", 70) + strings.Repeat("%{endif}", 70) + `" }`),
		groupFile("count = b" + strings.Repeat("[c]", 300)),
		"job \"x\" {\n  meta = { a = <<EOF\n${x}\nEOF\n }\n}\n",
	} {
		f.Add([]byte(s))
	}
	for _, glob := range []string{"../examples/*.hcl", "testdata/*.hcl"} {
		files, _ := filepath.Glob(glob)
		for _, file := range files {
			if src, err := os.ReadFile(file); err == nil {
				f.Add(src)
			}
		}
	}
}

// FuzzParseJSON: no body makes the JSON decoder, Canonicalize or Validate
// panic or overflow, and every job they accept is safe for the client.
func FuzzParseJSON(f *testing.F) {
	for _, s := range jsonSeeds {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, src []byte) {
		job, err := ParseJSON(src)
		if err != nil || job == nil {
			return
		}
		Canonicalize(job)
		if Validate(job) == nil {
			acceptedJobIsSafe(t, job)
		}
	})
}

// FuzzParseHCL: likewise for the HCL parser.
func FuzzParseHCL(f *testing.F) {
	hclSeeds(f)
	f.Fuzz(func(t *testing.T, src []byte) {
		job, err := Parse("fuzz.hcl", src)
		if err != nil {
			return
		}
		Canonicalize(job)
		if Validate(job) == nil {
			acceptedJobIsSafe(t, job)
		}
	})
}
