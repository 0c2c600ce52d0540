package jobspec

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/troupe-dev/troupe/messages"
)

const templateHCL = `
job "web" {
  group "g" {
    task "t" {
      driver = "exec"
      config { command = "/bin/true" }
      template {
        data          = "user={{ with nomadVar \"nomad/jobs/web\" }}{{ .user }}{{ end }}\n"
        destination   = "local/app.conf"
        change_mode   = "signal"
        change_signal = "sighup"
        perms         = "0600"
        uid           = 1000
        splay         = "2s"
      }
      template {
        data        = "A=1\n"
        destination = "secrets/app.env"
        env         = true
        left_delimiter  = "[["
        right_delimiter = "]]"
      }
    }
  }
}
`

func TestTemplateHCL(t *testing.T) {
	job, err := Parse("web.hcl", []byte(templateHCL))
	require.NoError(t, err)
	Canonicalize(job)
	require.NoError(t, Validate(job))
	ts := job.TaskGroups[0].Tasks[0].Templates
	require.Len(t, ts, 2)
	require.Equal(t, "local/app.conf", ts[0].DestPath)
	require.Equal(t, "signal", ts[0].ChangeMode)
	require.Equal(t, "SIGHUP", ts[0].ChangeSignal)
	require.Equal(t, "0600", ts[0].Perms)
	require.Equal(t, int32(1000), ts[0].GetUid())
	require.Nil(t, ts[0].Gid)
	require.Equal(t, int64(2e9), ts[0].Splay)
	require.Equal(t, "restart", ts[1].ChangeMode, "Nomad's default change_mode")
	require.Equal(t, int64(5e9), ts[1].Splay, "Nomad's default splay")
	require.Equal(t, "0644", ts[1].Perms)
	require.True(t, ts[1].Envvars)
	require.Equal(t, "[[", ts[1].LeftDelim)

	job, err = Parse("web.hcl", []byte("job \"x\" {\n group \"g\" {\n task \"t\" {\n driver = \"exec\"\n config { command = \"/bin/true\" }\n"+
		" template {\n data = \"x\"\n destination = \"local/x\"\n change_mode = \"script\"\n"+
		"change_script {\n command = \"/bin/x\"\n args = [\"-v\", \"now\"]\n timeout = \"3s\"\n fail_on_error = true\n }\n }\n }\n }\n }\n"))
	require.NoError(t, err)
	Canonicalize(job)
	require.NoError(t, Validate(job))
	cs := job.TaskGroups[0].Tasks[0].Templates[0].ChangeScript
	require.Equal(t, "/bin/x", cs.GetCommand())
	require.Equal(t, []string{"-v", "now"}, cs.GetArgs())
	require.Equal(t, int64(3e9), cs.GetTimeout())
	require.True(t, cs.GetFailOnError())
}

// TestChangeScriptJSON: Nomad's ChangeScript decodes from the job's JSON,
// with Nomad's default timeout.
func TestChangeScriptJSON(t *testing.T) {
	job, err := ParseJSON([]byte(`{"Job":{"ID":"r","TaskGroups":[{"Name":"g","Tasks":[{"Name":"t","Driver":"exec",
		"Config":{"command":"/bin/true"},"Templates":[{"EmbeddedTmpl":"x","DestPath":"local/x","ChangeMode":"script",
		"ChangeScript":{"Command":"/bin/reload","Args":["a"]}}]}]}]}}`))
	require.NoError(t, err)
	Canonicalize(job)
	require.NoError(t, Validate(job))
	cs := job.TaskGroups[0].Tasks[0].Templates[0].ChangeScript
	require.Equal(t, "/bin/reload", cs.Command)
	require.Equal(t, []string{"a"}, cs.Args)
	require.Equal(t, int64(5e9), cs.Timeout, "Nomad's default timeout")
	require.False(t, cs.FailOnError)
}

func TestTemplateJSON(t *testing.T) {
	job, err := ParseJSON([]byte(`{"Job":{"ID":"r","TaskGroups":[{"Name":"g","Tasks":[{"Name":"t","Driver":"exec",
		"Config":{"command":"/bin/true"},"Templates":[{"EmbeddedTmpl":"x","DestPath":"local/x","ChangeMode":"noop","Uid":7}]}]}]}}`))
	require.NoError(t, err)
	Canonicalize(job)
	require.NoError(t, Validate(job))
	tt := job.TaskGroups[0].Tasks[0].Templates[0]
	require.Equal(t, "noop", tt.ChangeMode)
	require.Equal(t, int32(7), tt.GetUid())
}

func TestTemplateValidation(t *testing.T) {
	for _, tc := range []struct {
		name string
		tt   *messages.TaskTemplate
		want string
	}{
		{"nothing", &messages.TaskTemplate{DestPath: "local/x"}, "template[0]: must specify a source path or have an embedded template"},
		{"both", &messages.TaskTemplate{DestPath: "local/x", EmbeddedTmpl: "x", SourcePath: "local/y"}, "source and data are exclusive"},
		{"no dest", &messages.TaskTemplate{EmbeddedTmpl: "x"}, "must specify a destination"},
		{"escaping dest", &messages.TaskTemplate{EmbeddedTmpl: "x", DestPath: "../../etc/passwd"}, `destination "../../etc/passwd" escapes the task directory`},
		{"task dir", &messages.TaskTemplate{EmbeddedTmpl: "x", DestPath: "/"}, "escapes the task directory"},
		{"escaping source", &messages.TaskTemplate{SourcePath: "local/../../x", DestPath: "local/x"}, "source \"local/../../x\" escapes"},
		{"signal without signal", &messages.TaskTemplate{EmbeddedTmpl: "x", DestPath: "local/x", ChangeMode: "signal"}, "must specify a change_signal"},
		{"bad signal", &messages.TaskTemplate{EmbeddedTmpl: "x", DestPath: "local/x", ChangeMode: "signal", ChangeSignal: "SIGNOPE"}, "change_signal \"SIGNOPE\" is not a signal"},
		{"script without change_script", &messages.TaskTemplate{EmbeddedTmpl: "x", DestPath: "local/x", ChangeMode: "script"},
			"must specify change script configuration value when setting change_mode to script"},
		{"script without command", &messages.TaskTemplate{EmbeddedTmpl: "x", DestPath: "local/x", ChangeMode: "script",
			ChangeScript: &messages.ChangeScript{}}, "must specify script path value"},
		{"bad mode", &messages.TaskTemplate{EmbeddedTmpl: "x", DestPath: "local/x", ChangeMode: "reboot"}, "change_mode \"reboot\" must be one of"},
		{"bad perms", &messages.TaskTemplate{EmbeddedTmpl: "x", DestPath: "local/x", Perms: "rw-"}, "perms \"rw-\" must be an octal"},
		{"bad text", &messages.TaskTemplate{EmbeddedTmpl: "{{ nomadVar ", DestPath: "local/x"}, "data does not parse"},
		{"unknown func", &messages.TaskTemplate{EmbeddedTmpl: "{{ consulKey \"x\" }}", DestPath: "local/x"}, `function "consulKey" not defined`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			job := &messages.Job{ID: "r", TaskGroups: []*messages.TaskGroup{{Name: "g",
				Tasks: []*messages.Task{{Name: "t", Driver: "exec", Templates: []*messages.TaskTemplate{tc.tt}}}}}}
			Canonicalize(job)
			err := Validate(job)
			require.Error(t, err)
			require.Contains(t, err.Error(), tc.want)
		})
	}
	two := &messages.Job{ID: "r", TaskGroups: []*messages.TaskGroup{{Name: "g", Tasks: []*messages.Task{{Name: "t", Driver: "exec",
		Templates: []*messages.TaskTemplate{{EmbeddedTmpl: "a", DestPath: "local/x"}, {EmbeddedTmpl: "b", DestPath: "/local/x"}}}}}}}
	Canonicalize(two)
	require.ErrorContains(t, Validate(two), `template[1]: destination "/local/x" is used by another template`)
}
