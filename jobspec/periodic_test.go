package jobspec

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/troupe-dev/troupe/messages"
)

const periodicHCL = `
job "report" {
  type = "batch"
  periodic {
    crons            = ["*/15 * * * *", "0 3 * * *"]
    prohibit_overlap = true
    time_zone        = "America/New_York"
  }
  group "g" {
    task "t" {
      driver = "exec"
      config { command = "/bin/true" }
    }
  }
}
`

func TestPeriodicHCL(t *testing.T) {
	job, err := Parse("report.hcl", []byte(periodicHCL))
	require.NoError(t, err)
	Canonicalize(job)
	require.NoError(t, Validate(job))
	p := job.GetPeriodic()
	require.True(t, p.Enabled, "a block without enabled is enabled")
	require.Equal(t, []string{"*/15 * * * *", "0 3 * * *"}, p.Specs)
	require.True(t, p.ProhibitOverlap)
	require.Equal(t, "America/New_York", p.TimeZone)
	require.Equal(t, PeriodicSpecCron, p.SpecType)

	off, err := Parse("off.hcl", []byte(`job "x" {
  type = "batch"
  periodic {
    cron    = "@daily"
    enabled = false
  }
  group "g" {
    task "t" {
      driver = "exec"
      config { command = "/bin/true" }
    }
  }
}`))
	require.NoError(t, err)
	Canonicalize(off)
	require.False(t, off.Periodic.Enabled)
	require.Equal(t, "@daily", off.Periodic.Spec)
	require.Equal(t, "UTC", off.Periodic.TimeZone)
}

func TestPeriodicJSON(t *testing.T) {
	job, err := ParseJSON([]byte(`{"Job":{"ID":"r","Type":"batch","Periodic":{"Spec":"*/5 * * * *","ProhibitOverlap":true},
		"TaskGroups":[{"Name":"g","Tasks":[{"Name":"t","Driver":"exec","Config":{"command":"/bin/true"}}]}]}}`))
	require.NoError(t, err)
	Canonicalize(job)
	require.NoError(t, Validate(job))
	require.True(t, job.Periodic.Enabled, "Nomad's default when Enabled is left out")
	require.Equal(t, []string{"*/5 * * * *"}, PeriodicSpecs(job.Periodic))

	job, err = ParseJSON([]byte(`{"ID":"r","Type":"batch","Periodic":{"Enabled":false,"Specs":["@hourly"]},
		"TaskGroups":[{"Name":"g","Tasks":[{"Name":"t","Driver":"exec","Config":{"command":"/bin/true"}}]}]}`))
	require.NoError(t, err)
	require.False(t, job.Periodic.Enabled)
}

func TestPeriodicValidation(t *testing.T) {
	for _, tc := range []struct {
		name string
		typ  string
		p    *messages.PeriodicConfig
		want string
	}{
		{"service job", TypeService, &messages.PeriodicConfig{Enabled: true, Specs: []string{"@daily"}}, `periodic: can only be used with "batch" jobs, not "service"`},
		{"bad cron", TypeBatch, &messages.PeriodicConfig{Enabled: true, Specs: []string{"61 * * * *"}}, `periodic: cron "61 * * * *" does not parse`},
		{"no cron", TypeBatch, &messages.PeriodicConfig{Enabled: true}, "periodic: crons must list at least one cron expression"},
		{"bad zone", TypeBatch, &messages.PeriodicConfig{Enabled: true, Specs: []string{"@daily"}, TimeZone: "Mars/Olympus"}, `periodic: time_zone "Mars/Olympus"`},
		{"bad type", TypeBatch, &messages.PeriodicConfig{Enabled: true, Specs: []string{"@daily"}, SpecType: "test"}, `periodic: spec type "test" must be "cron"`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			job := &messages.Job{ID: "r", Type: tc.typ, Periodic: tc.p, TaskGroups: []*messages.TaskGroup{{Name: "g",
				Tasks: []*messages.Task{{Name: "t", Driver: "exec"}}}}}
			Canonicalize(job)
			err := Validate(job)
			require.Error(t, err)
			require.Contains(t, err.Error(), tc.want)
		})
	}
}

// TestPeriodicNextAcrossDST: 09:00 in New York is 14:00 UTC the day
// before the spring change and 13:00 UTC the day of it.
func TestPeriodicNextAcrossDST(t *testing.T) {
	ny, err := time.LoadLocation("America/New_York")
	require.NoError(t, err)
	p := &messages.PeriodicConfig{Enabled: true, Specs: []string{"0 9 * * *"}, TimeZone: "America/New_York"}
	// 2026-03-08 is the spring-forward day in the US.
	next, err := PeriodicNext(p, time.Date(2026, 3, 7, 15, 0, 0, 0, time.UTC))
	require.NoError(t, err)
	require.Equal(t, time.Date(2026, 3, 8, 9, 0, 0, 0, ny), next)
	require.Equal(t, time.Date(2026, 3, 8, 13, 0, 0, 0, time.UTC), next.UTC(), "09:00 EDT is 13:00 UTC")
	prev, err := PeriodicNext(p, time.Date(2026, 3, 6, 15, 0, 0, 0, time.UTC))
	require.NoError(t, err)
	require.Equal(t, time.Date(2026, 3, 7, 14, 0, 0, 0, time.UTC), prev.UTC(), "09:00 EST is 14:00 UTC")

	// The earliest of several specs wins; the result is strictly after t.
	p = &messages.PeriodicConfig{Specs: []string{"0 12 * * *"}, Spec: "*/10 * * * *"}
	at := time.Date(2026, 1, 1, 11, 50, 0, 0, time.UTC)
	next, err = PeriodicNext(p, at)
	require.NoError(t, err)
	require.Equal(t, at.Add(10*time.Minute), next.UTC())

	_, err = PeriodicNext(&messages.PeriodicConfig{Specs: []string{"nope"}}, at)
	require.Error(t, err)
}
