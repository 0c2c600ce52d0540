package jobspec

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/troupe-dev/troupe/messages"
)

const artifactJob = `
job "web" {
  group "g" {
    task "t" {
      driver = "raw_exec"
      config { command = "/bin/cat" }
      artifact {
        source      = "https://example.com/app.tar.gz"
        destination = "local/app"
        options {
          checksum = "sha256:9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08"
          archive  = "false"
        }
        headers { X-Token = "abc" }
      }
      artifact {
        source = "https://example.com/files/conf.txt?x=1"
        mode   = "file"
      }
    }
  }
}
`

func TestParseArtifactHCL(t *testing.T) {
	job, err := Parse("a.hcl", []byte(artifactJob))
	require.NoError(t, err)
	Canonicalize(job)
	require.NoError(t, Validate(job))
	arts := job.TaskGroups[0].Tasks[0].Artifacts
	require.Len(t, arts, 2)
	require.Equal(t, "https://example.com/app.tar.gz", arts[0].GetterSource)
	require.Equal(t, "local/app", arts[0].RelativeDest)
	require.Equal(t, "any", arts[0].GetterMode)
	require.Equal(t, "false", arts[0].GetterOptions["archive"])
	require.Equal(t, map[string]string{"X-Token": "abc"}, arts[0].GetterHeaders)
	require.Equal(t, "file", arts[1].GetterMode)
	require.Equal(t, "local/conf.txt", arts[1].RelativeDest, "mode file defaults to local/<base name>")
}

func TestParseArtifactJSON(t *testing.T) {
	src := `{"Job": {"ID": "web", "Name": "web", "Type": "batch", "TaskGroups": [{"Name": "g",
	  "Tasks": [{"Name": "t", "Driver": "raw_exec", "Config": {"command": "/bin/true"},
	    "Artifacts": [{"GetterSource": "http://h/a.txt", "GetterOptions": {"checksum": "md5:d41d8cd98f00b204e9800998ecf8427e"},
	      "GetterHeaders": {"A": "b"}, "GetterMode": null, "GetterInsecure": false, "RelativeDest": null, "Chown": false}]}]}]}}`
	job, err := ParseJSON([]byte(src))
	require.NoError(t, err)
	Canonicalize(job)
	require.NoError(t, Validate(job))
	a := job.TaskGroups[0].Tasks[0].Artifacts[0]
	require.Equal(t, "http://h/a.txt", a.GetterSource)
	require.Equal(t, "local/", a.RelativeDest)
	require.Equal(t, "b", a.GetterHeaders["A"])

	_, err = ParseJSON([]byte(`{"Job": {"ID": "web", "TaskGroups": [{"Name": "g", "Tasks": [{"Name": "t",
	  "Artifacts": [{"GetterSource": "http://h/a", "Chown": true}]}]}]}}`))
	require.ErrorIs(t, err, ErrUnsupported)
	require.Contains(t, err.Error(), "Chown")
}

func TestArtifactChownRefusedInHCL(t *testing.T) {
	_, err := Parse("a.hcl", []byte(`job "w" {
	  group "g" {
	    task "t" {
	      driver = "exec"
	      artifact {
	        source = "http://h/a"
	        chown  = true
	      }
	    }
	  }
	}`))
	require.Error(t, err)
	require.Contains(t, err.Error(), "chown")
}

func TestValidateArtifact(t *testing.T) {
	ok := "sha256:9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08"
	for name, tc := range map[string]struct {
		art  *messages.TaskArtifact
		want string
	}{
		"no source":      {&messages.TaskArtifact{}, "artifact[0]: source must be set"},
		"bad mode":       {&messages.TaskArtifact{GetterSource: "http://h/a", GetterMode: "files"}, `mode "files" must be any, file or dir`},
		"escaping dest":  {&messages.TaskArtifact{GetterSource: "http://h/a", RelativeDest: "../../etc"}, "escapes the task directory"},
		"checksum shape": {&messages.TaskArtifact{GetterSource: "http://h/a", GetterOptions: map[string]string{"checksum": "abc"}}, `must be given as "type:value"`},
		"checksum type":  {&messages.TaskArtifact{GetterSource: "http://h/a", GetterOptions: map[string]string{"checksum": "crc32:abcd"}}, `checksum type "crc32" is not supported`},
		"checksum hex":   {&messages.TaskArtifact{GetterSource: "http://h/a", GetterOptions: map[string]string{"checksum": "sha256:zz"}}, "is not a sha256 digest (64 hex digits)"},
		"checksum len":   {&messages.TaskArtifact{GetterSource: "http://h/a", GetterOptions: map[string]string{"checksum": ok[:len(ok)-2]}}, "is not a sha256 digest"},
		"file to dir":    {&messages.TaskArtifact{GetterSource: "http://h/a", GetterMode: "file", RelativeDest: "/"}, "destination must name a file"},
		"fine":           {&messages.TaskArtifact{GetterSource: "http://h/a", GetterOptions: map[string]string{"checksum": ok}}, ""},
		"interpolated":   {&messages.TaskArtifact{GetterSource: "http://h/a", GetterOptions: map[string]string{"checksum": "${NOMAD_META_sum}"}}, ""},
	} {
		t.Run(name, func(t *testing.T) {
			job, err := Parse("a.hcl", []byte(`job "w" {
			  group "g" {
			    task "t" {
			      driver = "raw_exec"
			      config { command = "/bin/true" }
			    }
			  }
			}`))
			require.NoError(t, err)
			job.TaskGroups[0].Tasks[0].Artifacts = []*messages.TaskArtifact{tc.art}
			Canonicalize(job)
			err = Validate(job)
			if tc.want == "" {
				require.NoError(t, err)
				return
			}
			require.ErrorIs(t, err, ErrInvalid)
			require.Contains(t, err.Error(), tc.want)
		})
	}
}
