package jobspec

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

const identityHCL = `
job "web" {
  group "g" {
    task "t" {
      driver = "exec"
      config { command = "/bin/true" }
      identity {
        env  = true
        file = true
      }
      identity {
        name = "vault"
        aud  = ["vault.io"]
        ttl  = "1h"
        file = true
      }
    }
  }
}
`

func TestIdentityHCL(t *testing.T) {
	job, err := Parse("web.hcl", []byte(identityHCL))
	require.NoError(t, err)
	Canonicalize(job)
	require.NoError(t, Validate(job))
	task := job.TaskGroups[0].Tasks[0]
	require.NotNil(t, task.Identity)
	require.True(t, task.Identity.Env)
	require.True(t, task.Identity.File)
	require.Len(t, task.Identities, 1)
	named := task.Identities[0]
	require.Equal(t, "vault", named.Name)
	require.Equal(t, []string{"vault.io"}, named.Audience)
	require.Equal(t, int64(time.Hour), named.TTL)
	require.True(t, named.File)
	require.False(t, named.Env)
}

func TestIdentityJSON(t *testing.T) {
	job, err := ParseJSON([]byte(`{"Job": {"ID": "j", "TaskGroups": [{"Name": "g", "Tasks": [
		{"Name": "t", "Driver": "exec", "Config": {"command": "/bin/true"},
		 "Identity": {"Env": true, "Audience": ["a"], "TTL": 60000000000},
		 "Identities": [{"Name": "consul", "File": true}]}]}]}}`))
	require.NoError(t, err)
	Canonicalize(job)
	require.NoError(t, Validate(job))
	task := job.TaskGroups[0].Tasks[0]
	require.True(t, task.Identity.Env)
	require.Equal(t, int64(time.Minute), task.Identity.TTL)
	require.Equal(t, "consul", task.Identities[0].Name)

	// Nomad's server form: the default identity among Identities.
	job, err = ParseJSON([]byte(`{"Job": {"ID": "j", "TaskGroups": [{"Name": "g", "Tasks": [
		{"Name": "t", "Driver": "exec", "Config": {"command": "/bin/true"},
		 "Identities": [{"Name": "default", "Env": true}]}]}]}}`))
	require.NoError(t, err)
	Canonicalize(job)
	require.NoError(t, Validate(job))
	require.True(t, job.TaskGroups[0].Tasks[0].Identity.Env)
	require.Empty(t, job.TaskGroups[0].Tasks[0].Identities)
}

// TestIdentityRefused: Nomad's identity fields troupe does not implement
// are refused by name, in HCL and in JSON, and bad blocks are invalid.
func TestIdentityRefused(t *testing.T) {
	for _, field := range []string{"ChangeMode", "ChangeSignal", "Filepath", "ServiceName"} {
		_, err := ParseJSON([]byte(`{"Job": {"ID": "j", "TaskGroups": [{"Name": "g", "Tasks": [
			{"Name": "t", "Driver": "exec", "Config": {"command": "/bin/true"}, "Identity": {"` + field + `": "x"}}]}]}}`))
		require.Error(t, err, field)
		require.Contains(t, err.Error(), field)
	}
	for _, attr := range []string{`change_mode = "restart"`, `filepath = "x"`, `service_name = "s"`} {
		_, err := Parse("j.hcl", []byte("job \"j\" {\n group \"g\" {\n task \"t\" {\n driver = \"exec\"\n"+
			"config { command = \"/bin/true\" }\n identity { "+attr+" }\n}\n}\n}\n"))
		require.Error(t, err, attr)
		require.Contains(t, err.Error(), "not supported yet", attr)
	}
	for name, idents := range map[string]string{
		"two defaults": `identity { env = true } identity { name = "default" }`,
		"twice":        `identity { name = "a" } identity { name = "a" }`,
		"bad name":     `identity { name = "a/b" }`,
		"negative ttl": `identity { ttl = "-1s" }`,
		"empty aud":    `identity { aud = [""] }`,
	} {
		t.Run(name, func(t *testing.T) {
			src := "job \"j\" {\n group \"g\" {\n task \"t\" {\n driver = \"exec\"\n config { command = \"/bin/true\" }\n" +
				replaceSpaces(idents) + "\n}\n}\n}\n"
			job, err := Parse("j.hcl", []byte(src))
			if err == nil {
				Canonicalize(job)
				err = Validate(job)
			}
			require.Error(t, err)
		})
	}
}

// replaceSpaces puts each block of s on its own line (HCL wants one).
func replaceSpaces(s string) string {
	out := []byte{}
	for i := 0; i < len(s); i++ {
		out = append(out, s[i])
		if s[i] == '}' {
			out = append(out, '\n')
		}
	}
	return string(out)
}
