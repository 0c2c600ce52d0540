package alloc

import (
	"errors"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/troupe-dev/troupe/actors"
)

func TestLifecyclePhaseString(t *testing.T) {
	for p, want := range map[Phase]string{
		PhaseLoading: "loading", PhasePrerun: "prerun", PhasePrerunWait: "waiting to retry prerun",
		PhaseRunning: "running", PhaseStopping: "stopping", PhasePostrun: "postrun",
		PhasePostrunWait: "waiting to retry postrun", PhaseTerminal: "terminal", Phase(42): "Phase(42)",
	} {
		require.Equal(t, want, p.String())
	}
	require.Equal(t, "abandon", HookAbandon.String())
}

func TestLifecycleTransitionWholeTable(t *testing.T) {
	L, Pre, PreW, R, S, Post, PostW, T := PhaseLoading, PhasePrerun, PhasePrerunWait, PhaseRunning,
		PhaseStopping, PhasePostrun, PhasePostrunWait, PhaseTerminal
	legal := map[[2]Phase]bool{
		{L, L}: true, {L, Pre}: true, {L, R}: true, {L, S}: true, {L, Post}: true, {L, T}: true,
		{Pre, Pre}: true, {Pre, PreW}: true, {Pre, R}: true, {Pre, S}: true, {Pre, Post}: true, {Pre, T}: true,
		{PreW, Pre}: true, {PreW, Post}: true, {PreW, T}: true,
		{R, S}: true, {R, Post}: true, {R, T}: true,
		{S, Post}: true, {S, T}: true,
		{Post, Post}: true, {Post, PostW}: true, {Post, T}: true,
		{PostW, Post}: true,
	}
	for from := PhaseLoading; from <= PhaseTerminal+1; from++ {
		for to := PhaseLoading; to <= PhaseTerminal+1; to++ {
			t.Run(from.String()+"->"+to.String(), func(t *testing.T) {
				require.Equal(t, legal[[2]Phase{from, to}], CanLifecycleTransition(from, to))
			})
		}
	}
}

var (
	lt0        = time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC)
	errFlaky   = errors.New("flaky")
	errBroken  = errors.New("broken")
	testPolicy = actors.Retry{Initial: time.Second, Max: 4 * time.Second, Multiplier: 2, Deadline: time.Hour}
)

// testPlans is a hook list shaped like the alloc actor's: a network that
// retries its postrun (twice) and then abandons, an alloc dir, a prerun-only
// devices check, and csi volumes whose flaky prerun retries (three tries).
func testPlans() []HookPlan {
	return []HookPlan{
		{Name: "network", Prerun: true, Postrun: true, Abandon: true, PostrunRetry: &HookRetry{Policy: withAttempts(testPolicy, 2)}},
		{Name: "alloc_dir", Prerun: true, Postrun: true},
		{Name: "devices", Prerun: true},
		{Name: "csi", Prerun: true, Postrun: true,
			PrerunRetry: &HookRetry{Policy: withAttempts(testPolicy, 3), Retryable: func(err error) bool { return errors.Is(err, errFlaky) }}},
	}
}

type lstep struct {
	in    Event
	want  Effects
	phase Phase
}

func run(h int, p HookPhase) *HookStep { return &HookStep{Hook: h, Phase: p} }

func runLifecycle(t *testing.T, l *Lifecycle, steps []lstep) {
	t.Helper()
	for i, st := range steps {
		eff, err := l.Step(st.in)
		require.NoError(t, err, "step %d %#v", i, st.in)
		require.Equal(t, st.want, eff, "step %d %#v", i, st.in)
		require.Equal(t, st.phase, l.Phase(), "step %d %#v", i, st.in)
	}
}

func done(p HookPhase) HookDone { return HookDone{Phase: p, At: lt0} }

func failed(p HookPhase, err error, holding bool, at time.Duration) HookDone {
	return HookDone{Phase: p, Err: err, Holding: holding, At: lt0.Add(at)}
}

// setupSteps walk the prerun of every hook: network, alloc dir, devices, csi.
var setupSteps = []lstep{
	{Loaded{}, Effects{Run: run(0, HookPrerun)}, PhasePrerun},
	{done(HookPrerun), Effects{Run: run(1, HookPrerun)}, PhasePrerun},
	{done(HookPrerun), Effects{Run: run(2, HookPrerun)}, PhasePrerun},
	{done(HookPrerun), Effects{Run: run(3, HookPrerun)}, PhasePrerun},
	{done(HookPrerun), Effects{StartTasks: true}, PhaseRunning},
}

// teardownSteps walk the postrun backwards from the csi volumes; devices
// has none.
var teardownSteps = []lstep{
	{TasksDead{}, Effects{Run: run(3, HookPostrun)}, PhasePostrun},
	{done(HookPostrun), Effects{Run: run(1, HookPostrun)}, PhasePostrun},
	{done(HookPostrun), Effects{Run: run(0, HookPostrun)}, PhasePostrun},
	{done(HookPostrun), Effects{Report: true, Released: true}, PhaseTerminal},
}

func concat(parts ...[]lstep) []lstep {
	var out []lstep
	for _, p := range parts {
		out = append(out, p...)
	}
	return out
}

func TestLifecycleScenarios(t *testing.T) {
	sec := time.Second
	failedSetup := func(why string) Effects {
		return Effects{FailTasks: true, Status: StatusFailed, Description: DescSetupFailed + why}
	}
	tests := []struct {
		name  string
		steps []lstep
	}{
		{"setup, run, stop, teardown", concat(setupSteps, []lstep{
			{Updated{StopWanted: true, Description: "by user"}, Effects{Update: true, KillTasks: "allocation stopped: by user"}, PhaseStopping},
			{Updated{StopWanted: true}, Effects{}, PhaseStopping},
		}, teardownSteps)},
		{"an update while running runs the update hooks", concat(setupSteps, []lstep{
			{Updated{}, Effects{Update: true}, PhaseRunning},
		})},
		{"a failed task stops its siblings", concat(setupSteps, []lstep{
			{TaskDied{Task: "web"}, Effects{}, PhaseRunning},
			{TaskDied{Task: "db", Failed: true}, Effects{KillTasks: EventSiblingFailed + ": db"}, PhaseStopping},
			{TaskDied{Task: "web", Failed: true}, Effects{}, PhaseStopping},
		}, teardownSteps)},
		{"a dead leader stops the others", concat(setupSteps, []lstep{
			{TaskDied{Task: "main", Leader: true}, Effects{KillTasks: "leader task main is dead"}, PhaseStopping},
		})},
		{"tasks that end by themselves", concat(setupSteps, teardownSteps, []lstep{
			{TasksDead{}, Effects{}, PhaseTerminal},
			{Updated{StopWanted: true}, Effects{}, PhaseTerminal},
		})},
		{"stop wanted with running tasks: set up, started and stopped", []lstep{
			{Loaded{StopWanted: true, Handles: true}, Effects{Run: run(0, HookPrerun)}, PhasePrerun},
			{done(HookPrerun), Effects{Run: run(1, HookPrerun)}, PhasePrerun},
			{done(HookPrerun), Effects{Run: run(2, HookPrerun)}, PhasePrerun},
			{done(HookPrerun), Effects{Run: run(3, HookPrerun)}, PhasePrerun},
			{done(HookPrerun), Effects{StartTasks: true, KillTasks: "allocation stopped"}, PhaseStopping},
			{TasksDead{}, Effects{Run: run(3, HookPostrun)}, PhasePostrun},
		}},
		{"stopped before start, holding nothing", []lstep{
			{Loaded{StopWanted: true}, Effects{Status: StatusComplete, Description: DescStoppedEarly, Report: true, Released: true}, PhaseTerminal},
		}},
		{"stopped before start, holding a network", []lstep{
			{Loaded{StopWanted: true, Holding: true}, Effects{Status: StatusComplete, Description: DescStoppedEarly, Run: run(3, HookPostrun)}, PhasePostrun},
		}},
		{"unsafe name: refused, nothing torn down", []lstep{
			{Loaded{BadName: errBroken, Holding: true}, Effects{Refuse: true, Status: StatusFailed, Description: DescSetupFailed + "broken", Released: true}, PhaseTerminal},
		}},
		{"unsafe name of a finished allocation", []lstep{
			{Loaded{BadName: errBroken, Terminal: true}, Effects{Report: true, Released: true}, PhaseTerminal},
		}},
		{"finished, still holding: the teardown resumes", []lstep{
			{Loaded{Terminal: true, Holding: true}, Effects{Report: true, Run: run(3, HookPostrun)}, PhasePostrun},
		}},
		{"finished", []lstep{
			{Loaded{Terminal: true}, Effects{Report: true, Released: true}, PhaseTerminal},
		}},
		{"no task group", []lstep{
			{Loaded{NoTasks: true}, Effects{FailTasks: true, Status: StatusFailed, Description: DescNoTaskGroup, Released: true}, PhaseTerminal},
		}},
		{"no task group, holding", []lstep{
			{Loaded{NoTasks: true, Holding: true}, Effects{FailTasks: true, Status: StatusFailed, Description: DescNoTaskGroup, Run: run(3, HookPostrun)}, PhasePostrun},
		}},
		{"a failed prerun holding nothing ends the allocation", []lstep{
			setupSteps[0],
			{failed(HookPrerun, errBroken, false, 0), withReleased(failedSetup("broken")), PhaseTerminal},
		}},
		{"a failed prerun holding a network is torn down, all hooks", []lstep{
			setupSteps[0], setupSteps[1],
			{failed(HookPrerun, errBroken, true, 0), withRun(failedSetup("broken"), run(3, HookPostrun)), PhasePostrun},
			{done(HookPostrun), Effects{Run: run(1, HookPostrun)}, PhasePostrun},
		}},
		{"a flaky csi setup is retried with backoff, then works", concat(setupSteps[:4], []lstep{
			{failed(HookPrerun, errFlaky, true, 0), Effects{RetryIn: sec}, PhasePrerunWait},
			{RetryDue{}, Effects{Run: run(3, HookPrerun)}, PhasePrerun},
			{failed(HookPrerun, errFlaky, true, 5*sec), Effects{RetryIn: 2 * sec}, PhasePrerunWait},
			{RetryDue{}, Effects{Run: run(3, HookPrerun)}, PhasePrerun},
			{done(HookPrerun), Effects{StartTasks: true}, PhaseRunning},
		})},
		{"a csi setup out of tries fails", concat(setupSteps[:4], []lstep{
			{failed(HookPrerun, errFlaky, true, 0), Effects{RetryIn: sec}, PhasePrerunWait},
			{RetryDue{}, Effects{Run: run(3, HookPrerun)}, PhasePrerun},
			{failed(HookPrerun, errFlaky, true, 0), Effects{RetryIn: 2 * sec}, PhasePrerunWait},
			{RetryDue{}, Effects{Run: run(3, HookPrerun)}, PhasePrerun},
			{failed(HookPrerun, errFlaky, true, 0), withRun(failedSetup("flaky"), run(3, HookPostrun)), PhasePostrun},
		})},
		{"a csi setup past the retry deadline fails", concat(setupSteps[:4], []lstep{
			{failed(HookPrerun, errFlaky, true, 0), Effects{RetryIn: sec}, PhasePrerunWait},
			{RetryDue{}, Effects{Run: run(3, HookPrerun)}, PhasePrerun},
			{failed(HookPrerun, errFlaky, false, 2*time.Hour), withReleased(failedSetup("flaky")), PhaseTerminal},
		})},
		{"a final csi error fails at once", concat(setupSteps[:4], []lstep{
			{failed(HookPrerun, errBroken, true, 0), withRun(failedSetup("broken"), run(3, HookPostrun)), PhasePostrun},
		})},
		{"a stop while the csi setup waits ends it", concat(setupSteps[:4], []lstep{
			{failed(HookPrerun, errFlaky, true, 0), Effects{RetryIn: sec}, PhasePrerunWait},
			{Updated{}, Effects{}, PhasePrerunWait},
			{Updated{StopWanted: true}, Effects{StopTimer: true, Status: StatusComplete, Description: DescStoppedInSetup, Run: run(3, HookPostrun)}, PhasePostrun},
		})},
		{"a stop during the csi setup: its failure ends it as stopped", concat(setupSteps[:4], []lstep{
			{Updated{StopWanted: true}, Effects{}, PhasePrerun},
			{failed(HookPrerun, errBroken, true, 0), Effects{Status: StatusComplete, Description: DescStoppedInSetup, Run: run(3, HookPostrun)}, PhasePostrun},
		})},
		{"a stop during a network setup: its failure fails", []lstep{
			setupSteps[0],
			{Updated{StopWanted: true}, Effects{}, PhasePrerun},
			{failed(HookPrerun, errBroken, true, 0), withRun(failedSetup("broken"), run(3, HookPostrun)), PhasePostrun},
		}},
		{"a failed postrun without retry goes on", concat(setupSteps, []lstep{
			teardownSteps[0], teardownSteps[1],
			{failed(HookPostrun, errBroken, true, 0), Effects{Run: run(0, HookPostrun)}, PhasePostrun},
		})},
		{"a network teardown is retried, then abandoned", concat(setupSteps, teardownSteps[:3], []lstep{
			{failed(HookPostrun, errBroken, true, 0), Effects{RetryIn: sec}, PhasePostrunWait},
			{RetryDue{}, Effects{Run: run(0, HookPostrun)}, PhasePostrun},
			{failed(HookPostrun, errBroken, true, 0), Effects{Run: run(0, HookAbandon)}, PhasePostrun},
			{failed(HookAbandon, errBroken, false, 0), Effects{Report: true, Released: true}, PhaseTerminal},
		})},
		{"a failed state read is read again with backoff, never taken as nothing stored", []lstep{
			{Loaded{Err: errBroken, At: lt0}, Effects{RetryIn: sec}, PhaseLoading},
			{Updated{StopWanted: true}, Effects{}, PhaseLoading},
			{RetryDue{}, Effects{Load: true}, PhaseLoading},
			{Loaded{Err: errBroken, At: lt0.Add(sec)}, Effects{RetryIn: 2 * sec}, PhaseLoading},
			{RetryDue{}, Effects{Load: true}, PhaseLoading},
			{Loaded{Err: errBroken, At: lt0.Add(3 * sec)}, Effects{RetryIn: 4 * sec}, PhaseLoading},
			{RetryDue{}, Effects{Load: true}, PhaseLoading},
			{Loaded{Err: errBroken, At: lt0.Add(2 * time.Hour)}, Effects{RetryIn: 4 * sec}, PhaseLoading},
			{RetryDue{}, Effects{Load: true}, PhaseLoading},
			{Loaded{Handles: true}, Effects{Run: run(0, HookPrerun)}, PhasePrerun},
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			runLifecycle(t, NewLifecycle(testPlans(), testPolicy), tt.steps)
		})
	}
}

func withRun(eff Effects, s *HookStep) Effects { eff.Run = s; return eff }

func withReleased(eff Effects) Effects { eff.Released = true; return eff }

// TestLifecycleNoHooks: without hooks the tasks start at once and the
// allocation is terminal as soon as they are dead.
func TestLifecycleNoHooks(t *testing.T) {
	runLifecycle(t, NewLifecycle(nil, testPolicy), []lstep{
		{Loaded{}, Effects{StartTasks: true}, PhaseRunning},
		{TasksDead{}, Effects{Report: true, Released: true}, PhaseTerminal},
	})
}

// TestLifecycleUnexpectedEvents: late results and timers are errors that
// change nothing.
func TestLifecycleUnexpectedEvents(t *testing.T) {
	tests := []struct {
		name  string
		setup []lstep
		in    Event
	}{
		{"hook done while loading", nil, done(HookPrerun)},
		{"retry due while loading", nil, RetryDue{}},
		{"a second read result while waiting", []lstep{{Loaded{Err: errBroken}, Effects{RetryIn: time.Second}, PhaseLoading}}, Loaded{}},
		{"loaded twice", setupSteps[:1], Loaded{}},
		{"postrun done during prerun", setupSteps[:1], done(HookPostrun)},
		{"abandon done during prerun", setupSteps[:1], done(HookAbandon)},
		{"retry due during prerun", setupSteps[:1], RetryDue{}},
		{"hook done while running", setupSteps, done(HookPrerun)},
		{"retry due while running", setupSteps, RetryDue{}},
		{"a late prerun result during postrun", concat(setupSteps, teardownSteps[:1]), done(HookPrerun)},
		{"abandon done during a postrun", concat(setupSteps, teardownSteps[:1]), done(HookAbandon)},
		{"hook done when terminal", concat(setupSteps, teardownSteps), done(HookPostrun)},
		{"an unknown event", nil, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			l := NewLifecycle(testPlans(), testPolicy)
			runLifecycle(t, l, tt.setup)
			before := *l
			_, err := l.Step(tt.in)
			require.ErrorIs(t, err, ErrUnexpectedLifecycleEvent)
			require.Equal(t, before, *l, "an unexpected event changes nothing")
		})
	}
}

func withAttempts(p actors.Retry, n int) actors.Retry {
	p.Attempts = n
	return p
}
