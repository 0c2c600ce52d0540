package httpapi

import (
	"net/http"
	"testing"

	nomad "github.com/hashicorp/nomad/api"
	"github.com/stretchr/testify/require"
)

// TestSchedulerConfigThroughNomadsClient: Nomad's client reads the
// defaults, sets a configuration, and check-and-sets it: a stale index
// changes nothing (Updated false), the current one lands; a bad value is
// a 400 naming the field that changes nothing.
func TestSchedulerConfigThroughNomadsClient(t *testing.T) {
	b := newFSMBackend()
	op := nomadAgainst(t, b).Operator()

	got, _, err := op.SchedulerGetConfiguration(nil)
	require.NoError(t, err)
	require.Equal(t, nomad.SchedulerAlgorithmBinpack, got.SchedulerConfig.SchedulerAlgorithm)
	require.Equal(t, nomad.PreemptionConfig{SystemSchedulerEnabled: true}, got.SchedulerConfig.PreemptionConfig)
	require.Zero(t, got.SchedulerConfig.ModifyIndex)

	set, wm, err := op.SchedulerSetConfiguration(&nomad.SchedulerConfiguration{SchedulerAlgorithm: nomad.SchedulerAlgorithmSpread,
		PreemptionConfig: nomad.PreemptionConfig{ServiceSchedulerEnabled: true}}, nil)
	require.NoError(t, err)
	require.True(t, set.Updated)
	require.NotZero(t, wm.LastIndex)

	got, qm, err := op.SchedulerGetConfiguration(nil)
	require.NoError(t, err)
	cfg := got.SchedulerConfig
	require.Equal(t, nomad.SchedulerAlgorithmSpread, cfg.SchedulerAlgorithm)
	require.Equal(t, nomad.PreemptionConfig{ServiceSchedulerEnabled: true}, cfg.PreemptionConfig)
	require.Equal(t, wm.LastIndex, cfg.ModifyIndex)
	require.Equal(t, wm.LastIndex, qm.LastIndex)

	tests := []struct {
		name    string
		index   uint64 // the ModifyIndex the CAS names
		algo    nomad.SchedulerAlgorithm
		updated bool
	}{
		{"stale index", cfg.ModifyIndex - 1, nomad.SchedulerAlgorithmBinpack, false},
		{"the current index", cfg.ModifyIndex, nomad.SchedulerAlgorithmBinpack, true},
		{"the index just replaced", cfg.ModifyIndex, nomad.SchedulerAlgorithmSpread, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			before, _, err := op.SchedulerGetConfiguration(nil)
			require.NoError(t, err)
			res, _, err := op.SchedulerCASConfiguration(&nomad.SchedulerConfiguration{SchedulerAlgorithm: tt.algo, ModifyIndex: tt.index}, nil)
			require.NoError(t, err)
			require.Equal(t, tt.updated, res.Updated)
			after, _, err := op.SchedulerGetConfiguration(nil)
			require.NoError(t, err)
			if tt.updated {
				require.Equal(t, tt.algo, after.SchedulerConfig.SchedulerAlgorithm)
				require.Greater(t, after.SchedulerConfig.ModifyIndex, before.SchedulerConfig.ModifyIndex)
			} else {
				require.Equal(t, before.SchedulerConfig, after.SchedulerConfig, "a failed check-and-set changes nothing")
			}
		})
	}

	before, _, err := op.SchedulerGetConfiguration(nil)
	require.NoError(t, err)
	_, _, err = op.SchedulerSetConfiguration(&nomad.SchedulerConfiguration{SchedulerAlgorithm: "random"}, nil)
	require.ErrorContains(t, err, "400")
	require.ErrorContains(t, err, "SchedulerAlgorithm")
	code, body, _ := do(t, b, http.MethodPut, "/v1/operator/scheduler/configuration?cas=x", `{"SchedulerAlgorithm":"spread"}`, nil)
	require.Equal(t, http.StatusBadRequest, code)
	require.Contains(t, body, "cas")
	after, _, err := op.SchedulerGetConfiguration(nil)
	require.NoError(t, err)
	require.Equal(t, before.SchedulerConfig, after.SchedulerConfig, "bad values change nothing")
}

func memoryMaxJob() *nomad.Job {
	job := nomad.NewServiceJob("web", "web", "global", 50)
	tg := nomad.NewTaskGroup("g", 1)
	tg.AddTask(nomad.NewTask("t", "exec").SetConfig("command", "/bin/true").
		Require(&nomad.Resources{CPU: ptrTo(100), MemoryMB: ptrTo(64), MemoryMaxMB: ptrTo(256)}))
	job.AddTaskGroup(tg)
	return job
}

// TestRegistrationUnderSchedulerConfig: RejectJobRegistration refuses
// registrations with Nomad's 403 and stores nothing; without memory
// oversubscription a task's memory_max is accepted with Nomad's warning.
func TestRegistrationUnderSchedulerConfig(t *testing.T) {
	tests := []struct {
		name     string
		cfg      nomad.SchedulerConfiguration
		wantErr  string
		wantWarn string
	}{
		{name: "rejected", cfg: nomad.SchedulerConfiguration{RejectJobRegistration: true},
			wantErr: "Job registration, dispatch, and scale are disabled by the scheduler configuration"},
		{name: "memory_max ignored", wantWarn: "1 warning:\n\n* Memory oversubscription is not enabled; " +
			`Task "g.t" memory_max value will be ignored. Update the Scheduler Configuration to allow oversubscription.`},
		{name: "memory oversubscription on", cfg: nomad.SchedulerConfiguration{MemoryOversubscriptionEnabled: true}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			b := newFSMBackend()
			c := nomadAgainst(t, b)
			_, _, err := c.Operator().SchedulerSetConfiguration(&tt.cfg, nil)
			require.NoError(t, err)
			resp, _, err := c.Jobs().Register(memoryMaxJob(), nil)
			if tt.wantErr != "" {
				require.ErrorContains(t, err, "403")
				require.ErrorContains(t, err, tt.wantErr)
				require.Nil(t, b.Store().Snapshot().JobByID("default", "web"), "a refused registration stores nothing")
				return
			}
			require.NoError(t, err)
			require.Equal(t, tt.wantWarn, resp.Warnings)
			require.NotNil(t, b.Store().Snapshot().JobByID("default", "web"))
		})
	}
}
