package state

import (
	"errors"
	"testing"

	"github.com/stretchr/testify/require"
	"google.golang.org/protobuf/proto"

	"github.com/troupe-dev/troupe/messages"
)

func deregister(id string, purge bool, eval *messages.Evaluation) *messages.Command {
	return &messages.Command{Cmd: &messages.Command_DeregisterJob{DeregisterJob: &messages.DeregisterJob{
		Namespace: "default", JobID: id, Purge: purge, Eval: eval,
	}}}
}

func TestRegisterJobVersions(t *testing.T) {
	changed := testJob("web", 100, 100)
	changed.TaskGroups[0].Count = 3
	statusOnly := testJob("web", 100, 100)
	statusOnly.Status, statusOnly.Stable, statusOnly.Version, statusOnly.SubmitTime = "dead", true, 42, 7
	tests := []struct {
		name        string
		second      *messages.Job
		wantVersion uint64
		wantJMI     uint64 // JobModifyIndex after the second register
		wantVersns  int
	}{
		{"equal job keeps its version", testJob("web", 100, 100), 0, 1, 1},
		{"store-set fields are ignored", statusOnly, 0, 1, 1},
		{"changed job gets a new version", changed, 1, 2, 2},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h := newHarness(t)
			res := h.apply(registerJob(testJob("web", 100, 100), testEval("e1", "web", messages.EvalStatusPending)))
			require.Equal(t, &RegisterJobResult{Index: 1, JobModifyIndex: 1, EvalID: "e1"}, res)
			res = h.apply(&messages.Command{Time: testNow + 5, Cmd: registerJob(tt.second, testEval("e2", "web", messages.EvalStatusPending)).Cmd})
			require.Equal(t, &RegisterJobResult{Index: 2, JobModifyIndex: tt.wantJMI, EvalID: "e2"}, res)

			j := h.snap().JobByID("default", "web")
			require.Equal(t, tt.wantVersion, j.Version)
			require.Equal(t, uint64(1), j.CreateIndex)
			require.Equal(t, uint64(2), j.ModifyIndex)
			require.Equal(t, tt.wantJMI, j.JobModifyIndex)
			require.Len(t, h.snap().JobVersions("default", "web"), tt.wantVersns)
			require.Equal(t, tt.wantJMI, h.snap().EvalByID("e2").JobModifyIndex)
			require.Equal(t, []string{"e2"}, h.lastEvent().EvalsReady)
			require.Equal(t, []string{"default/web"}, h.lastEvent().JobsChanged)
			if tt.wantVersion == 0 {
				require.Equal(t, testNow, j.SubmitTime, "unchanged job keeps its submit time")
			} else {
				require.Equal(t, testNow+5, j.SubmitTime)
			}
		})
	}
}

func TestRegisterJobKeepsLastSixVersions(t *testing.T) {
	h := newHarness(t)
	for i := range 9 {
		h.apply(registerJob(testJob("web", int32(100+i), 100), nil))
	}
	versions := h.snap().JobVersions("default", "web")
	require.Len(t, versions, 6)
	require.Equal(t, uint64(8), versions[0].Version, "newest first")
	require.Equal(t, uint64(3), versions[5].Version)
	require.Nil(t, h.snap().JobVersion("default", "web", 2))
	require.Equal(t, int32(108), h.snap().JobVersion("default", "web", 8).TaskGroups[0].Tasks[0].Resources.CPU)
}

// TestRegisterJobKeepsTheVersionsItIsTold: an operator's
// job_tracked_versions replaces the default of six.
func TestRegisterJobKeepsTheVersionsItIsTold(t *testing.T) {
	for _, keep := range []int{1, 3, 10} {
		h := newHarness(t)
		h.fsm.Store().SetJobVersions(keep)
		for i := range 12 {
			h.apply(registerJob(testJob("web", int32(100+i), 100), nil))
		}
		versions := h.snap().JobVersions("default", "web")
		require.Len(t, versions, keep)
		require.Equal(t, uint64(11), versions[0].Version, "newest first")
		require.Equal(t, uint64(12-keep), versions[keep-1].Version)
	}
}

func TestDeregisterJob(t *testing.T) {
	tests := []struct {
		name        string
		purge       bool
		wantJob     bool
		wantVersion uint64
	}{
		{"stop makes a new stopped version", false, true, 1},
		{"purge deletes the job and its versions", true, false, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h := newHarness(t)
			h.apply(registerNode(testNode("n1", 1000, 1000)))
			h.apply(registerJob(testJob("web", 10, 10), testEval("e1", "web", messages.EvalStatusPending)))
			h.apply(plan(&messages.ApplyPlan{Place: []*messages.Allocation{testAlloc("a1", "web", "n1", "e1", 10, 10)}}))
			res := h.apply(deregister("web", tt.purge, testEval("e2", "web", messages.EvalStatusPending)))
			require.Equal(t, &DeregisterJobResult{Index: 4, JobModifyIndex: 4, EvalID: "e2"}, res)
			s := h.snap()
			require.Equal(t, []string{"e2"}, h.lastEvent().EvalsReady)
			require.NotNil(t, s.AllocByID("a1"), "allocations stay until collected")
			require.Equal(t, uint64(4), s.EvalByID("e2").JobModifyIndex)
			if !tt.wantJob {
				require.Nil(t, s.JobByID("default", "web"))
				require.Empty(t, s.JobVersions("default", "web"))
				return
			}
			j := s.JobByID("default", "web")
			require.True(t, j.Stop)
			require.Equal(t, tt.wantVersion, j.Version)
			require.Equal(t, messages.JobStatusRunning, j.Status, "its allocation still runs")
			require.Len(t, s.JobVersions("default", "web"), 2)
		})
	}
}

func TestDeregisterUnknownJob(t *testing.T) {
	h := newHarness(t)
	res := h.apply(deregister("nope", false, testEval("e1", "nope", messages.EvalStatusPending)))
	err, ok := res.(error)
	require.True(t, ok)
	require.True(t, errors.Is(err, ErrJobNotFound))
	require.Nil(t, h.snap().EvalByID("e1"), "nothing changed")
	require.Empty(t, h.events)
}

func TestJobStatusTransitions(t *testing.T) {
	h := newHarness(t)
	status := func() string { return h.snap().JobByID("default", "web").Status }
	h.apply(registerNode(testNode("n1", 1000, 1000)))
	h.apply(registerJob(testJob("web", 10, 10), testEval("e1", "web", messages.EvalStatusPending)))
	require.Equal(t, messages.JobStatusPending, status())

	h.apply(plan(&messages.ApplyPlan{
		Place:      []*messages.Allocation{testAlloc("a1", "web", "n1", "e1", 10, 10)},
		EvalUpdate: testEval("e1", "web", "complete"),
	}))
	require.Equal(t, messages.JobStatusRunning, status())
	require.Contains(t, h.lastEvent().JobsChanged, "default/web")

	h.apply(clientUpdate(&messages.Allocation{ID: "a1", ClientStatus: "running"}))
	require.Equal(t, messages.JobStatusRunning, status())

	h.apply(deregister("web", false, testEval("e2", "web", messages.EvalStatusPending)))
	require.Equal(t, messages.JobStatusRunning, status(), "stopped but its alloc is not terminal yet")

	h.apply(plan(&messages.ApplyPlan{
		Stop:       []*messages.AllocStopUpdate{{AllocID: "a1", DesiredDescription: "job stopped"}},
		EvalUpdate: testEval("e2", "web", "complete"),
	}))
	require.Equal(t, messages.JobStatusDead, status())
}

func TestBatchJobDeadWhenAllocsComplete(t *testing.T) {
	h := newHarness(t)
	job := testJob("batch", 10, 10)
	job.Type = "batch"
	h.apply(registerNode(testNode("n1", 1000, 1000)))
	h.apply(registerJob(job, testEval("e1", "batch", messages.EvalStatusPending)))
	h.apply(plan(&messages.ApplyPlan{
		Place:      []*messages.Allocation{testAlloc("a1", "batch", "n1", "e1", 10, 10)},
		EvalUpdate: testEval("e1", "batch", "complete"),
	}))
	h.apply(clientUpdate(&messages.Allocation{ID: "a1", ClientStatus: "complete"}))
	require.Equal(t, messages.JobStatusDead, h.snap().JobByID("default", "batch").Status)
}

func TestUpsertEvalsKeepsCreateIndex(t *testing.T) {
	h := newHarness(t)
	upsert := func(evals ...*messages.Evaluation) *messages.Command {
		return &messages.Command{Cmd: &messages.Command_UpsertEvals{UpsertEvals: &messages.UpsertEvals{Evals: evals}}}
	}
	delayed := testEval("e2", "web", messages.EvalStatusPending)
	delayed.WaitUntil = testNow + 1e9
	h.apply(upsert(testEval("e1", "web", messages.EvalStatusPending), delayed, testEval("e3", "web", "blocked")))
	ev := h.lastEvent()
	require.Equal(t, []string{"e1"}, ev.EvalsReady)
	require.Len(t, ev.DelayedEvals, 1)
	require.Equal(t, "e2", ev.DelayedEvals[0].ID)
	require.Empty(t, ev.EvalsEnded)

	// Ended evaluations are reported, so that the scheduler stops
	// waiting for a delayed one.
	h.apply(upsert(testEval("e2", "web", messages.EvalStatusCanceled), testEval("e3", "web", messages.EvalStatusFailed)))
	require.Equal(t, []string{"e2", "e3"}, h.lastEvent().EvalsEnded)
	require.Empty(t, h.lastEvent().DelayedEvals)

	h.apply(&messages.Command{Time: testNow + 10, Cmd: upsert(testEval("e1", "web", "complete")).Cmd})
	e := h.snap().EvalByID("e1")
	require.Equal(t, uint64(1), e.CreateIndex)
	require.Equal(t, uint64(3), e.ModifyIndex)
	require.Equal(t, testNow, e.CreateTime)
	require.Equal(t, testNow+10, e.ModifyTime)
	require.Empty(t, h.lastEvent().EvalsReady)
	require.Equal(t, []string{"e1"}, h.lastEvent().EvalsEnded)
}

func TestBadCommands(t *testing.T) {
	h := newHarness(t)
	tests := []struct {
		name string
		cmd  *messages.Command
	}{
		{"no command", &messages.Command{}},
		{"register without job", registerJob(nil, nil)},
		{"register node without ID", registerNode(&messages.Node{})},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err, ok := h.apply(tt.cmd).(error)
			require.True(t, ok)
			require.ErrorIs(t, err, ErrBadCommand)
		})
	}
	t.Run("undecodable", func(t *testing.T) {
		err, ok := h.fsm.Apply(rawLog(99, []byte{0xff, 0xff})).(error)
		require.True(t, ok)
		require.ErrorIs(t, err, ErrBadCommand)
	})
	require.Empty(t, h.events)
}

func TestRegisterJobDoesNotAliasCommand(t *testing.T) {
	h := newHarness(t)
	h.apply(registerJob(testJob("web", 10, 10), nil))
	j := h.snap().JobByID("default", "web")
	before := proto.Clone(j)
	h.apply(registerJob(testJob("web", 10, 10), nil)) // unchanged: copies the stored job
	require.True(t, proto.Equal(before, j), "stored object was not mutated")
	require.Equal(t, uint64(2), h.snap().JobByID("default", "web").ModifyIndex)
}

func TestRegisterJobEnforcesTheJobModifyIndex(t *testing.T) {
	h := newHarness(t)
	enforce := func(j *messages.Job, idx uint64) *messages.Command {
		cmd := registerJob(j, nil)
		cmd.GetRegisterJob().EnforceIndex, cmd.GetRegisterJob().JobModifyIndex = true, idx
		return cmd
	}
	err, _ := h.apply(enforce(testJob("web", 10, 10), 5)).(error)
	require.ErrorIs(t, err, ErrJobModifyIndex, "a new job with an index")
	require.Nil(t, h.snap().JobByID("default", "web"), "nothing stored")

	res := h.apply(enforce(testJob("web", 10, 10), 0)).(*RegisterJobResult)
	first := res.JobModifyIndex
	changed := testJob("web", 20, 10)
	err, _ = h.apply(enforce(changed, first+1)).(error)
	require.ErrorIs(t, err, ErrJobModifyIndex)
	require.ErrorContains(t, err, "Enforcing job modify index", "Nomad's clients look for this")
	require.EqualValues(t, 0, h.snap().JobByID("default", "web").GetVersion(), "unchanged")

	res = h.apply(enforce(testJob("web", 20, 10), first)).(*RegisterJobResult)
	require.Greater(t, res.JobModifyIndex, first)
	require.EqualValues(t, 1, h.snap().JobByID("default", "web").GetVersion())
}
