package alloc

import (
	"errors"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/troupe-dev/troupe/actors"
)

func TestLifecyclePhaseString(t *testing.T) {
	for p, want := range map[phase]string{
		phaseLoading: "loading", phasePrerun: "prerun", phasePrerunWait: "waiting to retry prerun",
		phaseRunning: "running", phaseStopping: "stopping", phasePostrun: "postrun",
		phasePostrunWait: "waiting to retry postrun", phaseTerminal: "terminal", phase(42): "Phase(42)",
	} {
		require.Equal(t, want, p.String())
	}
	require.Equal(t, "abandon", hookAbandon.String())
}

func TestLifecycleTransitionWholeTable(t *testing.T) {
	L, Pre, PreW, R, S, Post, PostW, T := phaseLoading, phasePrerun, phasePrerunWait, phaseRunning,
		phaseStopping, phasePostrun, phasePostrunWait, phaseTerminal
	legal := map[[2]phase]bool{
		{L, L}: true, {L, Pre}: true, {L, R}: true, {L, S}: true, {L, Post}: true, {L, T}: true,
		{Pre, Pre}: true, {Pre, PreW}: true, {Pre, R}: true, {Pre, S}: true, {Pre, Post}: true, {Pre, T}: true,
		{PreW, Pre}: true, {PreW, Post}: true, {PreW, T}: true,
		{R, S}: true, {R, Post}: true, {R, T}: true,
		{S, Post}: true, {S, T}: true,
		{Post, Post}: true, {Post, PostW}: true, {Post, T}: true,
		{PostW, Post}: true,
	}
	for from := phaseLoading; from <= phaseTerminal+1; from++ {
		for to := phaseLoading; to <= phaseTerminal+1; to++ {
			t.Run(from.String()+"->"+to.String(), func(t *testing.T) {
				require.Equal(t, legal[[2]phase{from, to}], canLifecycleTransition(from, to))
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
func testPlans() []hookPlan {
	return []hookPlan{
		{Name: "network", Prerun: true, Postrun: true, Abandon: true, PostrunRetry: &hookRetry{Policy: withAttempts(testPolicy, 2)}},
		{Name: "alloc_dir", Prerun: true, Postrun: true},
		{Name: "devices", Prerun: true},
		{Name: "csi", Prerun: true, Postrun: true,
			PrerunRetry: &hookRetry{Policy: withAttempts(testPolicy, 3), Retryable: func(err error) bool { return errors.Is(err, errFlaky) }}},
	}
}

type lstep struct {
	in    event
	want  effects
	phase phase
}

func run(h int, p hookPhase) *hookStep { return &hookStep{Hook: h, Phase: p} }

func runLifecycle(t *testing.T, l *lifecycle, steps []lstep) {
	t.Helper()
	for i, st := range steps {
		eff, err := l.Step(st.in)
		require.NoError(t, err, "step %d %#v", i, st.in)
		require.Equal(t, st.want, eff, "step %d %#v", i, st.in)
		require.Equal(t, st.phase, l.Phase(), "step %d %#v", i, st.in)
	}
}

func done(p hookPhase) HookDone { return HookDone{Phase: p, At: lt0} }

func failed(p hookPhase, err error, holding bool, at time.Duration) HookDone {
	return HookDone{Phase: p, Err: err, Holding: holding, At: lt0.Add(at)}
}

// setupSteps walk the prerun of every hook: network, alloc dir, devices, csi.
var setupSteps = []lstep{
	{Loaded{}, effects{Run: run(0, hookPrerun)}, phasePrerun},
	{done(hookPrerun), effects{Run: run(1, hookPrerun)}, phasePrerun},
	{done(hookPrerun), effects{Run: run(2, hookPrerun)}, phasePrerun},
	{done(hookPrerun), effects{Run: run(3, hookPrerun)}, phasePrerun},
	{done(hookPrerun), effects{StartTasks: true}, phaseRunning},
}

// teardownSteps walk the postrun backwards from the csi volumes; devices
// has none.
var teardownSteps = []lstep{
	{tasksDead{}, effects{Run: run(3, hookPostrun)}, phasePostrun},
	{done(hookPostrun), effects{Run: run(1, hookPostrun)}, phasePostrun},
	{done(hookPostrun), effects{Run: run(0, hookPostrun)}, phasePostrun},
	{done(hookPostrun), effects{Report: true, Released: true}, phaseTerminal},
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
	failedSetup := func(why string) effects {
		return effects{FailTasks: true, Status: statusFailed, Description: descSetupFailed + why}
	}
	tests := []struct {
		name  string
		steps []lstep
	}{
		{"setup, run, stop, teardown", concat(setupSteps, []lstep{
			{updated{StopWanted: true, Description: "by user"}, effects{Update: true, KillTasks: "allocation stopped: by user"}, phaseStopping},
			{updated{StopWanted: true}, effects{}, phaseStopping},
		}, teardownSteps)},
		{"an update while running runs the update hooks", concat(setupSteps, []lstep{
			{updated{}, effects{Update: true}, phaseRunning},
		})},
		{"a failed task stops its siblings", concat(setupSteps, []lstep{
			{taskDied{Task: "web"}, effects{}, phaseRunning},
			{taskDied{Task: "db", Failed: true}, effects{KillTasks: eventSiblingFailed + ": db"}, phaseStopping},
			{taskDied{Task: "web", Failed: true}, effects{}, phaseStopping},
		}, teardownSteps)},
		{"a dead leader stops the others", concat(setupSteps, []lstep{
			{taskDied{Task: "main", Leader: true}, effects{KillTasks: "leader task main is dead"}, phaseStopping},
		})},
		{"dead main tasks stop the sidecars", concat(setupSteps, []lstep{
			{taskDied{MainDead: true}, effects{KillTasks: eventMainDead}, phaseStopping},
			{taskDied{MainDead: true}, effects{}, phaseStopping},
		}, teardownSteps)},
		{"tasks that end by themselves", concat(setupSteps, teardownSteps, []lstep{
			{tasksDead{}, effects{}, phaseTerminal},
			{updated{StopWanted: true}, effects{}, phaseTerminal},
		})},
		{"stop wanted with running tasks: set up, started and stopped", []lstep{
			{Loaded{StopWanted: true, Handles: true}, effects{Run: run(0, hookPrerun)}, phasePrerun},
			{done(hookPrerun), effects{Run: run(1, hookPrerun)}, phasePrerun},
			{done(hookPrerun), effects{Run: run(2, hookPrerun)}, phasePrerun},
			{done(hookPrerun), effects{Run: run(3, hookPrerun)}, phasePrerun},
			{done(hookPrerun), effects{StartTasks: true, KillTasks: "allocation stopped"}, phaseStopping},
			{tasksDead{}, effects{Run: run(3, hookPostrun)}, phasePostrun},
		}},
		{"stopped before start, holding nothing", []lstep{
			{Loaded{StopWanted: true}, effects{Status: statusComplete, Description: descStoppedEarly, Report: true, Released: true}, phaseTerminal},
		}},
		{"stopped before start, holding a network", []lstep{
			{Loaded{StopWanted: true, Holding: true}, effects{Status: statusComplete, Description: descStoppedEarly, Run: run(3, hookPostrun)}, phasePostrun},
		}},
		{"unsafe name: refused, nothing torn down", []lstep{
			{Loaded{BadName: errBroken, Holding: true}, effects{Refuse: true, Status: statusFailed, Description: descSetupFailed + "broken", Released: true}, phaseTerminal},
		}},
		{"unsafe name of a finished allocation", []lstep{
			{Loaded{BadName: errBroken, Terminal: true}, effects{Report: true, Released: true}, phaseTerminal},
		}},
		{"finished, still holding: the teardown resumes", []lstep{
			{Loaded{Terminal: true, Holding: true}, effects{Report: true, Run: run(3, hookPostrun)}, phasePostrun},
		}},
		{"finished", []lstep{
			{Loaded{Terminal: true}, effects{Report: true, Released: true}, phaseTerminal},
		}},
		{"no task group", []lstep{
			{Loaded{NoTasks: true}, effects{FailTasks: true, Status: statusFailed, Description: descNoTaskGroup, Released: true}, phaseTerminal},
		}},
		{"no task group, holding", []lstep{
			{Loaded{NoTasks: true, Holding: true}, effects{FailTasks: true, Status: statusFailed, Description: descNoTaskGroup, Run: run(3, hookPostrun)}, phasePostrun},
		}},
		{"a failed prerun holding nothing ends the allocation", []lstep{
			setupSteps[0],
			{failed(hookPrerun, errBroken, false, 0), withReleased(failedSetup("broken")), phaseTerminal},
		}},
		{"a failed prerun holding a network is torn down, all hooks", []lstep{
			setupSteps[0], setupSteps[1],
			{failed(hookPrerun, errBroken, true, 0), withRun(failedSetup("broken"), run(3, hookPostrun)), phasePostrun},
			{done(hookPostrun), effects{Run: run(1, hookPostrun)}, phasePostrun},
		}},
		{"a flaky csi setup is retried with backoff, then works", concat(setupSteps[:4], []lstep{
			{failed(hookPrerun, errFlaky, true, 0), effects{RetryIn: sec}, phasePrerunWait},
			{RetryDue{}, effects{Run: run(3, hookPrerun)}, phasePrerun},
			{failed(hookPrerun, errFlaky, true, 5*sec), effects{RetryIn: 2 * sec}, phasePrerunWait},
			{RetryDue{}, effects{Run: run(3, hookPrerun)}, phasePrerun},
			{done(hookPrerun), effects{StartTasks: true}, phaseRunning},
		})},
		{"a csi setup out of tries fails", concat(setupSteps[:4], []lstep{
			{failed(hookPrerun, errFlaky, true, 0), effects{RetryIn: sec}, phasePrerunWait},
			{RetryDue{}, effects{Run: run(3, hookPrerun)}, phasePrerun},
			{failed(hookPrerun, errFlaky, true, 0), effects{RetryIn: 2 * sec}, phasePrerunWait},
			{RetryDue{}, effects{Run: run(3, hookPrerun)}, phasePrerun},
			{failed(hookPrerun, errFlaky, true, 0), withRun(failedSetup("flaky"), run(3, hookPostrun)), phasePostrun},
		})},
		{"a csi setup past the retry deadline fails", concat(setupSteps[:4], []lstep{
			{failed(hookPrerun, errFlaky, true, 0), effects{RetryIn: sec}, phasePrerunWait},
			{RetryDue{}, effects{Run: run(3, hookPrerun)}, phasePrerun},
			{failed(hookPrerun, errFlaky, false, 2*time.Hour), withReleased(failedSetup("flaky")), phaseTerminal},
		})},
		{"a final csi error fails at once", concat(setupSteps[:4], []lstep{
			{failed(hookPrerun, errBroken, true, 0), withRun(failedSetup("broken"), run(3, hookPostrun)), phasePostrun},
		})},
		{"a stop while the csi setup waits ends it", concat(setupSteps[:4], []lstep{
			{failed(hookPrerun, errFlaky, true, 0), effects{RetryIn: sec}, phasePrerunWait},
			{updated{}, effects{}, phasePrerunWait},
			{updated{StopWanted: true}, effects{StopTimer: true, Status: statusComplete, Description: descStoppedInSetup, Run: run(3, hookPostrun)}, phasePostrun},
		})},
		{"a stop during the csi setup: its failure ends it as stopped", concat(setupSteps[:4], []lstep{
			{updated{StopWanted: true}, effects{}, phasePrerun},
			{failed(hookPrerun, errBroken, true, 0), effects{Status: statusComplete, Description: descStoppedInSetup, Run: run(3, hookPostrun)}, phasePostrun},
		})},
		{"a stop during a network setup: its failure fails", []lstep{
			setupSteps[0],
			{updated{StopWanted: true}, effects{}, phasePrerun},
			{failed(hookPrerun, errBroken, true, 0), withRun(failedSetup("broken"), run(3, hookPostrun)), phasePostrun},
		}},
		{"a failed postrun without retry goes on", concat(setupSteps, []lstep{
			teardownSteps[0], teardownSteps[1],
			{failed(hookPostrun, errBroken, true, 0), effects{Run: run(0, hookPostrun)}, phasePostrun},
		})},
		{"a network teardown is retried, then abandoned", concat(setupSteps, teardownSteps[:3], []lstep{
			{failed(hookPostrun, errBroken, true, 0), effects{RetryIn: sec}, phasePostrunWait},
			{RetryDue{}, effects{Run: run(0, hookPostrun)}, phasePostrun},
			{failed(hookPostrun, errBroken, true, 0), effects{Run: run(0, hookAbandon)}, phasePostrun},
			{failed(hookAbandon, errBroken, false, 0), effects{Report: true, Released: true}, phaseTerminal},
		})},
		{"a failed state read is read again with backoff, never taken as nothing stored", []lstep{
			{Loaded{Err: errBroken, At: lt0}, effects{RetryIn: sec}, phaseLoading},
			{updated{StopWanted: true}, effects{}, phaseLoading},
			{RetryDue{}, effects{Load: true}, phaseLoading},
			{Loaded{Err: errBroken, At: lt0.Add(sec)}, effects{RetryIn: 2 * sec}, phaseLoading},
			{RetryDue{}, effects{Load: true}, phaseLoading},
			{Loaded{Err: errBroken, At: lt0.Add(3 * sec)}, effects{RetryIn: 4 * sec}, phaseLoading},
			{RetryDue{}, effects{Load: true}, phaseLoading},
			{Loaded{Err: errBroken, At: lt0.Add(2 * time.Hour)}, effects{RetryIn: 4 * sec}, phaseLoading},
			{RetryDue{}, effects{Load: true}, phaseLoading},
			{Loaded{Handles: true}, effects{Run: run(0, hookPrerun)}, phasePrerun},
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			runLifecycle(t, newLifecycle(testPlans(), testPolicy), tt.steps)
		})
	}
}

func withRun(eff effects, s *hookStep) effects { eff.Run = s; return eff }

func withReleased(eff effects) effects { eff.Released = true; return eff }

// TestLifecycleNoHooks: without hooks the tasks start at once and the
// allocation is terminal as soon as they are dead.
func TestLifecycleNoHooks(t *testing.T) {
	runLifecycle(t, newLifecycle(nil, testPolicy), []lstep{
		{Loaded{}, effects{StartTasks: true}, phaseRunning},
		{tasksDead{}, effects{Report: true, Released: true}, phaseTerminal},
	})
}

// TestLifecycleUnexpectedEvents: late results and timers are errors that
// change nothing.
func TestLifecycleUnexpectedEvents(t *testing.T) {
	tests := []struct {
		name  string
		setup []lstep
		in    event
	}{
		{"hook done while loading", nil, done(hookPrerun)},
		{"retry due while loading", nil, RetryDue{}},
		{"a second read result while waiting", []lstep{{Loaded{Err: errBroken}, effects{RetryIn: time.Second}, phaseLoading}}, Loaded{}},
		{"loaded twice", setupSteps[:1], Loaded{}},
		{"postrun done during prerun", setupSteps[:1], done(hookPostrun)},
		{"abandon done during prerun", setupSteps[:1], done(hookAbandon)},
		{"retry due during prerun", setupSteps[:1], RetryDue{}},
		{"hook done while running", setupSteps, done(hookPrerun)},
		{"retry due while running", setupSteps, RetryDue{}},
		{"a late prerun result during postrun", concat(setupSteps, teardownSteps[:1]), done(hookPrerun)},
		{"abandon done during a postrun", concat(setupSteps, teardownSteps[:1]), done(hookAbandon)},
		{"hook done when terminal", concat(setupSteps, teardownSteps), done(hookPostrun)},
		{"an unknown event", nil, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			l := newLifecycle(testPlans(), testPolicy)
			runLifecycle(t, l, tt.setup)
			before := *l
			_, err := l.Step(tt.in)
			require.ErrorIs(t, err, errUnexpectedLifecycleEvent)
			require.Equal(t, before, *l, "an unexpected event changes nothing")
		})
	}
}

func withAttempts(p actors.Retry, n int) actors.Retry {
	p.Attempts = n
	return p
}
