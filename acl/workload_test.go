package acl

import (
	"testing"

	"github.com/stretchr/testify/require"
)

// TestWorkloadACL is the whole table of a workload identity's implicit
// rules: its own job's variables (read, list), its services, and nothing
// else.
func TestWorkloadACL(t *testing.T) {
	a := ForWorkload(Workload{Namespace: "prod", Job: "web", Group: "g", Task: "t"})
	require.True(t, a.IsWorkload())
	require.False(t, a.IsManagement())
	vars := []struct {
		ns, path, cap string
		want          bool
	}{
		{"prod", "nomad/jobs/web", VarRead, true},
		{"prod", "nomad/jobs/web/g", VarRead, true},
		{"prod", "nomad/jobs/web/g/t", VarRead, true},
		{"prod", "nomad/jobs/web/g/t", VarList, true},
		{"prod", "nomad/jobs", VarList, true},
		{"prod", "nomad/jobs/web/g/t/deeper", VarRead, false},
		{"prod", "nomad/jobs/web/g/other", VarRead, false},
		{"prod", "nomad/jobs/web/other", VarRead, false},
		{"prod", "nomad/jobs/db", VarRead, false},
		{"prod", "nomad/jobs/webx", VarRead, false},
		{"prod", "app/secret", VarRead, false},
		{"prod", "nomad/jobs/web", VarWrite, false},
		{"prod", "nomad/jobs/web", VarDestroy, false},
		{"default", "nomad/jobs/web", VarRead, false},
	}
	for _, v := range vars {
		require.Equal(t, v.want, a.AllowVariableOperation(v.ns, v.path, v.cap), "%s %s %s", v.ns, v.path, v.cap)
	}
	require.True(t, a.AllowServiceRead("prod"))
	require.False(t, a.AllowServiceRead("default"))
	require.True(t, a.AllowNamespace("prod"))
	require.False(t, a.AllowNamespace("default"))
	for _, c := range []string{NsReadJob, NsListJobs, NsSubmitJob, NsReadLogs, NsAllocExec} {
		require.False(t, a.AllowNamespaceOperation("prod", c), c)
	}
	require.False(t, a.AllowNodeRead())
	require.False(t, a.AllowAgentRead())
	require.False(t, a.AllowOperatorRead())
	require.False(t, a.AllowPluginList())

	// A token's read-job grants service reads; a workload is no token.
	tok := Compile(&Policy{Namespaces: []*NamespaceRule{{Name: "prod", Capabilities: []string{NsReadJob}}}})
	require.True(t, tok.AllowServiceRead("prod"))
	require.False(t, tok.IsWorkload())
	require.True(t, Management.AllowServiceRead("any"))
}
