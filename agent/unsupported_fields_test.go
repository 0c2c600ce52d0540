package agent

import (
	"errors"
	"net/http"
	"testing"

	nomad "github.com/hashicorp/nomad/api"
	"github.com/stretchr/testify/require"
)

// TestNomadClientFieldsNotSupportedAreRefused: a job built with Nomad's
// client that sets a field troupe does not implement is refused with a
// 400 naming the field, by register, plan and parse alike, and nothing is
// stored; the same job without it (canonicalized by Nomad's client or
// not) registers.
func TestNomadClientFieldsNotSupportedAreRefused(t *testing.T) {
	a := startAgent(t, testConfig(t, t.TempDir()))
	defer a.Shutdown()
	c, err := nomad.NewClient(&nomad.Config{Address: "http://" + a.HTTPAddr()})
	require.NoError(t, err)
	plain := func() *nomad.Job {
		j := nomad.NewBatchJob("odd", "odd", "global", 50)
		j.AddTaskGroup(nomad.NewTaskGroup("g", 1).AddTask(nomad.NewTask("t", "exec").
			SetConfig("command", "/bin/true").Require(&nomad.Resources{CPU: ptr(20), MemoryMB: ptr(16)})))
		return j
	}
	cases := []struct {
		name string
		set  func(*nomad.Job)
		want string
	}{
		{"vault", func(j *nomad.Job) {
			j.TaskGroups[0].Tasks[0].Vault = &nomad.Vault{Policies: []string{"x"}}
		}, `job "odd": group "g": task "t": Vault is not supported yet`},
		{"identity change_mode", func(j *nomad.Job) {
			j.TaskGroups[0].Tasks[0].Identity = &nomad.WorkloadIdentity{Env: true, ChangeMode: "restart"}
		}, `ChangeMode is not supported yet`},
		{"multiregion", func(j *nomad.Job) {
			j.Multiregion = &nomad.Multiregion{Strategy: &nomad.MultiregionStrategy{OnFailure: ptr("fail_some")},
				Regions: []*nomad.MultiregionRegion{{Name: "global"}}}
		}, `on_failure "fail_some" must be "fail_all", "fail_local" or unset`},
		{"consul services", func(j *nomad.Job) {
			j.TaskGroups[0].Services = []*nomad.Service{{Name: "web", Provider: "consul"}}
		}, `service provider "consul" is not supported`},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			job := plain()
			tc.set(job)
			_, _, err := c.Jobs().Register(job, nil)
			requireRefused(t, err, tc.want)
			_, _, err = c.Jobs().Plan(job, false, nil)
			requireRefused(t, err, tc.want)
			_, _, err = c.Jobs().Info("odd", nil)
			require.Error(t, err, "a refused job is not stored")
			var ue nomad.UnexpectedResponseError
			require.True(t, errors.As(err, &ue), "%v", err)
			require.Equal(t, http.StatusNotFound, ue.StatusCode())
		})
	}
	// A multiregion block parses.
	parsed, err := c.Jobs().ParseHCL("job \"odd\" {\n  multiregion {\n    region \"east\" {}\n    region \"west\" {}\n  }\n}\n", false)
	require.NoError(t, err)
	require.Len(t, parsed.Multiregion.Regions, 2)

	canonical := plain()
	canonical.Canonicalize()
	for _, job := range []*nomad.Job{plain(), canonical} {
		_, _, err = c.Jobs().Register(job, nil)
		require.NoError(t, err)
	}
	_, _, err = c.Jobs().Info("odd", nil)
	require.NoError(t, err, "register returns once the job is stored")
}

func requireRefused(t *testing.T, err error, want string) {
	t.Helper()
	require.Error(t, err)
	var ue nomad.UnexpectedResponseError
	require.True(t, errors.As(err, &ue), "%v", err)
	require.Equal(t, http.StatusBadRequest, ue.StatusCode(), err.Error())
	require.Contains(t, ue.Body(), want)
}
