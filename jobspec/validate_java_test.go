package jobspec

import (
	"testing"

	"github.com/stretchr/testify/require"
	"google.golang.org/protobuf/types/known/structpb"
)

func TestValidateJavaConfig(t *testing.T) {
	for _, tc := range []struct {
		name string
		cfg  map[string]any
		want string
	}{
		{"jar", map[string]any{"jar_path": "local/app.jar", "jvm_options": []any{"-Xmx64m"}, "args": []any{"a"}}, ""},
		{"class", map[string]any{"class": "Main", "class_path": "local"}, ""},
		{"neither", map[string]any{"jvm_options": []any{"-Dx=y"}}, `task "t": config: one of jar_path or class must be set`},
		{"both", map[string]any{"jar_path": "a.jar", "class": "Main"}, "config: jar_path and class are exclusive"},
		{"class_path with jar", map[string]any{"jar_path": "a.jar", "class_path": "lib"}, "config: class_path goes with class"},
		{"args not a list", map[string]any{"class": "Main", "args": "a b"}, "config: args must be a list of strings"},
		{"unknown key", map[string]any{"class": "Main", "command": "x"}, `config: unknown config key "command"`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			job := validJob(t)
			task := job.TaskGroups[0].Tasks[0]
			task.Driver = "java"
			var err error
			task.Config, err = structpb.NewStruct(tc.cfg)
			require.NoError(t, err)
			err = Validate(job)
			if tc.want == "" {
				require.NoError(t, err)
				return
			}
			require.ErrorContains(t, err, tc.want)
		})
	}
}

// TestJavaJobFile: a java job file in HCL decodes into the config the
// driver checks; a bad one names the key.
func TestJavaJobFile(t *testing.T) {
	src := func(config string) []byte {
		return []byte(`job "j" {
  group "g" {
    task "t" {
      driver = "java"
      config {
` + config + `
      }
      resources {
        cpu    = 100
        memory = 128
      }
    }
  }
}`)
	}
	job, err := Parse("j.hcl", src(`jar_path = "local/app.jar"
jvm_options = ["-Xmx64m", "-Dx=y"]
args = ["a"]`))
	require.NoError(t, err)
	Canonicalize(job)
	require.NoError(t, Validate(job))
	cfg := job.TaskGroups[0].Tasks[0].GetConfig().AsMap()
	require.Equal(t, []any{"-Xmx64m", "-Dx=y"}, cfg["jvm_options"])

	job, err = Parse("j.hcl", src(`class_path = "local"`))
	require.NoError(t, err)
	Canonicalize(job)
	require.ErrorContains(t, Validate(job), `task "t": config: one of jar_path or class must be set`)
}
