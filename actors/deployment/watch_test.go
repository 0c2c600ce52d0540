package deployment

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/troupe-dev/troupe/messages"
)

var t0 = time.Unix(1_700_000_000, 0)

func group(mut func(s *messages.DeploymentState)) *messages.DeploymentState {
	s := &messages.DeploymentState{DesiredTotal: 4, ProgressDeadline: int64(10 * time.Minute),
		RequireProgressBy: t0.Add(10 * time.Minute).UnixNano()}
	if mut != nil {
		mut(s)
	}
	return s
}

func running(groups map[string]*messages.DeploymentState) *messages.Deployment {
	return &messages.Deployment{ID: "d", JobID: "web", JobVersion: 1, Status: messages.DeploymentStatusRunning,
		StatusDescription: messages.DeploymentDescRunning, TaskGroups: groups}
}

func job(version uint64, count int32) *messages.Job {
	return &messages.Job{ID: "web", Version: version, TaskGroups: []*messages.TaskGroup{{Name: "g", Count: count}}}
}

// TestStep is the deployment state machine as a table: each row a
// deployment's stored state and the clock, and what Step asks for.
func TestStep(t *testing.T) {
	rev := RevertJob(job(0, 4))
	for _, tc := range []struct {
		name string
		in   Input
		want Effects
	}{
		{"rolling: first step asks nothing, arms the deadline",
			Input{Deployment: running(map[string]*messages.DeploymentState{"g": group(nil)}), Now: t0},
			Effects{WakeAt: t0.Add(10 * time.Minute)}},
		{"rolling: a new healthy alloc asks for the next batch",
			Input{Deployment: running(map[string]*messages.DeploymentState{"g": group(func(s *messages.DeploymentState) {
				s.PlacedAllocs, s.HealthyAllocs = 2, 1
			})}), PreviousHealth: map[string]int32{"g": 0}, Now: t0},
			Effects{Eval: true, WakeAt: t0.Add(10 * time.Minute)}},
		{"a new actor asks for an evaluation when allocations are healthy",
			Input{Deployment: running(map[string]*messages.DeploymentState{"g": group(func(s *messages.DeploymentState) {
				s.HealthyAllocs = 1
			})}), PreviousHealth: map[string]int32{}, Now: t0},
			Effects{Eval: true, WakeAt: t0.Add(10 * time.Minute)}},
		{"rolling: no change, no eval",
			Input{Deployment: running(map[string]*messages.DeploymentState{"g": group(func(s *messages.DeploymentState) {
				s.HealthyAllocs = 1
			})}), PreviousHealth: map[string]int32{"g": 1}, Now: t0},
			Effects{WakeAt: t0.Add(10 * time.Minute)}},
		{"rolling: all healthy succeeds",
			Input{Deployment: running(map[string]*messages.DeploymentState{"g": group(func(s *messages.DeploymentState) {
				s.PlacedAllocs, s.HealthyAllocs = 4, 4
			})}), Now: t0},
			Effects{Status: messages.DeploymentStatusSuccessful, Description: messages.DeploymentDescSuccessful, Eval: true}},
		{"multiregion: all healthy blocks, waiting for the peer regions",
			Input{Deployment: func() *messages.Deployment {
				d := running(map[string]*messages.DeploymentState{"g": group(func(s *messages.DeploymentState) {
					s.PlacedAllocs, s.HealthyAllocs = 4, 4
				})})
				d.IsMultiregion = true
				return d
			}(), Now: t0},
			Effects{Status: messages.DeploymentStatusBlocked, Description: messages.DeploymentDescBlocked, Eval: true}},
		{"canary: healthy canary waits for manual promotion",
			Input{Deployment: running(map[string]*messages.DeploymentState{"g": group(func(s *messages.DeploymentState) {
				s.DesiredCanaries, s.PlacedCanaries, s.HealthyAllocs = 1, []string{"c"}, 1
			})}), HealthyCanary: map[string]int{"g": 1}, Now: t0.Add(time.Hour)},
			Effects{Status: messages.DeploymentStatusRunning, Description: messages.DeploymentDescRunningNeedsPromo}},
		{"canary: promoted and healthy succeeds",
			Input{Deployment: running(map[string]*messages.DeploymentState{"g": group(func(s *messages.DeploymentState) {
				s.DesiredCanaries, s.Promoted, s.HealthyAllocs = 1, true, 4
			})}), Now: t0},
			Effects{Status: messages.DeploymentStatusSuccessful, Description: messages.DeploymentDescSuccessful, Eval: true}},
		{"auto-promote once every canary is healthy",
			Input{Deployment: running(map[string]*messages.DeploymentState{"g": group(func(s *messages.DeploymentState) {
				s.DesiredCanaries, s.AutoPromote, s.PlacedCanaries, s.HealthyAllocs = 2, true, []string{"a", "b"}, 2
			})}), HealthyCanary: map[string]int{"g": 2}, Now: t0},
			Effects{Promote: true}},
		{"auto-promote waits for the second canary",
			Input{Deployment: running(map[string]*messages.DeploymentState{"g": group(func(s *messages.DeploymentState) {
				s.DesiredCanaries, s.AutoPromote, s.PlacedCanaries, s.HealthyAllocs = 2, true, []string{"a", "b"}, 1
			})}), HealthyCanary: map[string]int{"g": 1}, Now: t0},
			Effects{WakeAt: t0.Add(10 * time.Minute)}},
		{"failure without auto-revert",
			Input{Deployment: running(map[string]*messages.DeploymentState{"g": group(func(s *messages.DeploymentState) {
				s.UnhealthyAllocs = 1
			})}), Stable: job(0, 4), Job: job(1, 4), Now: t0},
			Effects{Status: messages.DeploymentStatusFailed, Description: messages.DeploymentDescFailedAllocations}},
		{"failure with auto-revert registers the stable version",
			Input{Deployment: running(map[string]*messages.DeploymentState{"g": group(func(s *messages.DeploymentState) {
				s.UnhealthyAllocs, s.AutoRevert = 1, true
			})}), Stable: job(0, 4), Job: job(1, 5), Now: t0},
			Effects{Status: messages.DeploymentStatusFailed, Revert: rev,
				Description: "Failed due to unhealthy allocations - rolling back to job version 0"}},
		{"auto-revert without a stable version",
			Input{Deployment: running(map[string]*messages.DeploymentState{"g": group(func(s *messages.DeploymentState) {
				s.UnhealthyAllocs, s.AutoRevert = 1, true
			})}), Job: job(1, 5), Now: t0},
			Effects{Status: messages.DeploymentStatusFailed,
				Description: "Failed due to unhealthy allocations - no stable job version to auto revert to"}},
		{"auto-revert to the same spec does nothing",
			Input{Deployment: running(map[string]*messages.DeploymentState{"g": group(func(s *messages.DeploymentState) {
				s.UnhealthyAllocs, s.AutoRevert = 1, true
			})}), Stable: job(0, 4), Job: job(1, 4), Now: t0},
			Effects{Status: messages.DeploymentStatusFailed,
				Description: "Failed due to unhealthy allocations - not rolling back to stable job version 0 as current job has same specification"}},
		{"progress deadline passed",
			Input{Deployment: running(map[string]*messages.DeploymentState{"g": group(func(s *messages.DeploymentState) {
				s.HealthyAllocs = 2
			})}), Now: t0.Add(11 * time.Minute)},
			Effects{Status: messages.DeploymentStatusFailed, Description: messages.DeploymentDescProgressDeadline}},
		{"paused does nothing, deadline or not",
			Input{Deployment: func() *messages.Deployment {
				d := running(map[string]*messages.DeploymentState{"g": group(func(s *messages.DeploymentState) { s.UnhealthyAllocs = 1 })})
				d.Status = messages.DeploymentStatusPaused
				return d
			}(), Now: t0.Add(time.Hour)},
			Effects{}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if tc.in.PreviousHealth == nil { // rows without one: no change since the last step
				tc.in.PreviousHealth = map[string]int32{}
				for name, s := range tc.in.Deployment.TaskGroups {
					tc.in.PreviousHealth[name] = s.HealthyAllocs
				}
			}
			got := Step(tc.in)
			if tc.want.Revert != nil {
				require.NotNil(t, got.Revert)
				require.Equal(t, tc.want.Revert.String(), got.Revert.String())
				got.Revert, tc.want.Revert = nil, nil
			}
			require.Equal(t, tc.want, got)
		})
	}
}
