package node

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/troupe-dev/troupe/messages"
)

// tableAlloc is allocation id of group g, whose stop_on_client_after is
// 30 s.
func tableAlloc(id, desired, client string) *messages.Allocation {
	a := allocWith(id, 30*time.Second)
	a.DesiredStatus, a.ClientStatus = desired, client
	return a
}

func reportOf(id, client string) *messages.Allocation {
	return &messages.Allocation{ID: id, ClientStatus: client}
}

// effectKinds names what a step asks for, in a fixed order ("-": nothing).
func effectKinds(eff allocEffects) string {
	var k []string
	add := func(on bool, name string) {
		if on {
			k = append(k, name)
		}
	}
	var updates, stops int
	for _, u := range eff.Update {
		if u.GetDesiredStatus() == "stop" && u.GetJob() == nil {
			stops++
		} else {
			updates++
		}
	}
	add(len(eff.Spawn) > 0, "spawn")
	add(updates > 0, "update")
	add(stops > 0, "stop")
	add(len(eff.Forget) > 0, "forget")
	add(len(eff.Send) > 0, "send")
	add(eff.Flush == flushBatch, "batch")
	add(eff.Flush == flushRetry, "retry")
	add(len(eff.Crashed) > 0, "crashed")
	add(len(eff.WindowStops) > 0, "windowstop")
	add(eff.ArmStopCheck, "armstop")
	add(eff.Stale, "stale")
	if len(k) == 0 {
		return "-"
	}
	return strings.Join(k, ",")
}

// tableSetups bring allocation "a" into each starting state of the whole
// table.
var tableSetups = map[string][]allocEvent{
	"absent":   nil,
	"listed":   {evListed{Index: 1, Allocs: []*messages.Allocation{tableAlloc("a", "stop", "pending")}}},
	"restored": {evRestored{Allocs: []*messages.Allocation{tableAlloc("a", "run", "running")}}},
	"running":  {evListed{Index: 1, Allocs: []*messages.Allocation{tableAlloc("a", "run", "pending")}}},
	"finished": {evListed{Index: 1, Allocs: []*messages.Allocation{tableAlloc("a", "run", "pending")}},
		evReported{Alloc: reportOf("a", "complete")}, evFlushDue{}, evFlushed{}},
	"finished+released": {evListed{Index: 1, Allocs: []*messages.Allocation{tableAlloc("a", "run", "pending")}},
		evReported{Alloc: reportOf("a", "complete")}, evFlushDue{}, evFlushed{}, evReleased{ID: "a"}},
	// forgotten while its last report is in flight
	"reporting": {evListed{Index: 1, Allocs: []*messages.Allocation{tableAlloc("a", "run", "pending")}},
		evReported{Alloc: reportOf("a", "complete")}, evReleased{ID: "a"}, evFlushDue{},
		evListed{Index: 2}},
}

var tableEvents = map[string]allocEvent{
	"list run":     evListed{Index: 10, Allocs: []*messages.Allocation{tableAlloc("a", "run", "pending")}},
	"list stop":    evListed{Index: 10, Allocs: []*messages.Allocation{tableAlloc("a", "stop", "pending")}},
	"list none":    evListed{Index: 10},
	"list stale":   evListed{Index: 0, Allocs: []*messages.Allocation{tableAlloc("a", "run", "pending")}},
	"report run":   evReported{Alloc: reportOf("a", "running")},
	"report done":  evReported{Alloc: reportOf("a", "complete")},
	"released":     evReleased{ID: "a"},
	"died":         evDied{ID: "a", At: t0},
	"spawn failed": evSpawnFailed{ID: "a"},
	"flush due":    evFlushDue{},
	"flushed":      evFlushed{},
	"flush failed": evFlushed{Failed: true},
	"resend":       evResend{},
	"windows due":  evWindowsDue{Now: at(time.Minute), LastContact: t0},
}

// TestAllocTableWholeTable: every event in every state of an entry, with
// the phase it leaves and the kinds of effects it has ("error": refused,
// nothing changes).
func TestAllocTableWholeTable(t *testing.T) {
	cols := []string{"list run", "list stop", "list none", "list stale", "report run", "report done", "released",
		"died", "spawn failed", "flush due", "flushed", "flush failed", "resend", "windows due"}
	want := map[string][]string{
		"absent": {"running spawn,armstop", "listed -", "absent -", "running spawn,armstop", "reporting batch",
			"reporting batch", "absent -", "absent -", "absent -", "absent -", "error", "error", "absent -", "absent -"},
		"listed": {"running spawn,armstop", "listed -", "absent -", "listed stale", "listed batch", "listed batch",
			"listed -", "listed -", "listed -", "listed -", "error", "error", "listed -", "listed -"},
		"restored": {"running update", "running update", "running stop", "running update", "running batch",
			"finished batch", "running -", "absent -", "absent armstop", "running -", "error", "error", "running -",
			"running stop,windowstop"},
		"running": {"running update", "running update", "running stop", "running stale", "running batch",
			"finished batch", "running -", "listed batch,crashed", "listed armstop", "running -", "error", "error",
			"running -", "running stop,windowstop"},
		"finished": {"finished update", "finished update", "finished -", "finished stale", "running batch",
			"finished batch", "finished -", "listed -", "listed armstop", "finished -", "error", "error",
			"finished batch", "finished -"},
		"finished+released": {"finished update", "finished update", "absent forget", "finished stale", "running batch",
			"finished batch", "finished -", "listed -", "listed armstop", "finished -", "error", "error",
			"finished batch", "finished -"},
		"reporting": {"running spawn,armstop", "listed -", "reporting -", "reporting stale", "reporting -",
			"reporting -", "reporting -", "reporting -", "reporting -", "reporting -", "absent -", "reporting retry",
			"reporting -", "reporting -"},
	}
	require.Len(t, want, len(tableSetups))
	require.Len(t, cols, len(tableEvents))
	for from, row := range want {
		require.Len(t, row, len(cols), from)
		for i, col := range cols {
			t.Run(from+"/"+col, func(t *testing.T) {
				tab := newAllocTable()
				for _, ev := range tableSetups[from] {
					_, err := tab.Step(ev)
					require.NoError(t, err, "setup %T", ev)
				}
				before := fmt.Sprintf("%s %d", tab.phase("a"), tab.Len())
				eff, err := tab.Step(tableEvents[col])
				if err != nil {
					require.ErrorIs(t, err, errInvalidAllocEvent)
					require.Equal(t, row[i], "error")
					require.Equal(t, before, fmt.Sprintf("%s %d", tab.phase("a"), tab.Len()), "a refused event changes nothing")
					return
				}
				require.Equal(t, row[i], tab.phase("a").String()+" "+effectKinds(eff))
				if tab.phase("a") == phaseAbsent {
					require.Zero(t, tab.Len(), "an allocation that is gone leaves no entry")
				}
			})
		}
	}
}

func TestAllocTableRefusesBadEvents(t *testing.T) {
	tab := newAllocTable()
	for _, ev := range []allocEvent{nil, evReported{}, evReleased{}, evDied{}, evSpawnFailed{},
		evFlushed{}, evWindowsDue{LastContact: t0}} {
		_, err := tab.Step(ev)
		require.ErrorIs(t, err, errInvalidAllocEvent, "%#v", ev)
	}
	require.Zero(t, tab.Len())
	require.Equal(t, "reporting", phaseReporting.String())
	require.Equal(t, "entryPhase(9)", entryPhase(9).String())
}

type tableStep = stepCase[allocEvent, allocEffects, entryPhase]

// TestAllocTableLifecycle follows one allocation from its push to its
// last report, with every effect.
func TestAllocTableLifecycle(t *testing.T) {
	run := tableAlloc("a", "run", "pending")
	running, done := reportOf("a", "running"), reportOf("a", "complete")
	tab := newAllocTable()
	runTable(t, []tableStep{
		{evListed{Index: 1, Allocs: []*messages.Allocation{run}}, allocEffects{Spawn: []*messages.Allocation{run}, ArmStopCheck: true}, phaseRunning},
		{evListed{Index: 1, Allocs: []*messages.Allocation{run}}, allocEffects{Update: []*messages.Allocation{run}}, phaseRunning},
		{evReported{Alloc: running}, allocEffects{Flush: flushBatch}, phaseRunning},
		{evReported{Alloc: done}, allocEffects{}, phaseFinished},
		{evFlushDue{}, allocEffects{Send: []*messages.Allocation{done}}, phaseFinished},
		{evFlushed{Failed: true}, allocEffects{Flush: flushRetry}, phaseFinished},
		{evFlushDue{}, allocEffects{Send: []*messages.Allocation{done}}, phaseFinished},
		{evListed{Index: 2}, allocEffects{}, phaseFinished},
		{evReleased{ID: "a"}, allocEffects{Forget: []string{"a"}}, phaseReporting},
		{evFlushed{}, allocEffects{}, phaseAbsent},
		{evResend{}, allocEffects{}, phaseAbsent},
	}, tab.Step, func() entryPhase { return tab.phase("a") })
	require.Zero(t, tab.Len())
}

// TestAllocTableWindowsAndCrash: a window passed stops the allocation once;
// an actor that dies while wanted is reported failed.
func TestAllocTableWindowsAndCrash(t *testing.T) {
	run := tableAlloc("a", "run", "pending")
	stop := &messages.Allocation{ID: "a", DesiredStatus: "stop", DesiredDescription: "client lost contact with the servers for 30s"}
	failed := &messages.Allocation{ID: "a", ClientStatus: "failed", ClientDescription: "the allocation's actor crashed repeatedly",
		ModifyTime: at(time.Minute).UnixNano()}
	tab := newAllocTable()
	runTable(t, []tableStep{
		{evListed{Index: 1, Allocs: []*messages.Allocation{run}}, allocEffects{Spawn: []*messages.Allocation{run}, ArmStopCheck: true}, phaseRunning},
		{evWindowsDue{Now: at(30*time.Second - 1), LastContact: t0}, allocEffects{}, phaseRunning},
		{evWindowsDue{Now: at(30 * time.Second)}, allocEffects{}, phaseRunning}, // never in contact
		{evWindowsDue{Now: at(30 * time.Second), LastContact: t0}, allocEffects{Update: []*messages.Allocation{stop},
			WindowStops: []windowStop{{ID: "a", Window: 30 * time.Second}}}, phaseRunning},
		{evWindowsDue{Now: at(time.Hour), LastContact: t0}, allocEffects{}, phaseRunning},
		{evDied{ID: "a", At: at(time.Minute)}, allocEffects{Flush: flushBatch, Crashed: []*messages.Allocation{failed}}, phaseListed},
		{evDied{ID: "a", At: at(time.Minute)}, allocEffects{}, phaseListed},
		{evFlushDue{}, allocEffects{Send: []*messages.Allocation{failed}}, phaseListed},
		{evFlushed{}, allocEffects{}, phaseListed},
		{evListed{Index: 2}, allocEffects{}, phaseAbsent},
	}, tab.Step, func() entryPhase { return tab.phase("a") })
	require.Zero(t, tab.Len())
}

// mustStep steps the table and returns the effects.
func mustStep(t *testing.T, tab *allocTable, ev allocEvent) allocEffects {
	t.Helper()
	eff, err := tab.Step(ev)
	require.NoError(t, err, "%#v", ev)
	return eff
}

// TestAllocTableForgetsAllocsThatCameAndWent: allocations that finished,
// crashed, or reported after they were forgotten leave no entry once the
// servers answered their last report.
func TestAllocTableForgetsAllocsThatCameAndWent(t *testing.T) {
	const n = 300
	tab := newAllocTable()
	var index uint64
	list := func(allocs ...*messages.Allocation) allocEffects {
		index++
		return mustStep(t, tab, evListed{Index: index, Allocs: allocs})
	}
	flush := func() {
		mustStep(t, tab, evFlushDue{})
		mustStep(t, tab, evFlushed{})
	}
	forgotten := 0
	for i := range n {
		id := fmt.Sprintf("a%d", i)
		list(tableAlloc(id, "run", "pending"))
		switch i % 3 {
		case 0: // finished, forgotten while its last report is in flight
			mustStep(t, tab, evReported{Alloc: reportOf(id, "running")})
			flush()
			mustStep(t, tab, evReported{Alloc: reportOf(id, "complete")})
			mustStep(t, tab, evReleased{ID: id})
			mustStep(t, tab, evFlushDue{})
			forgotten += len(list().Forget)
			mustStep(t, tab, evFlushed{})
		case 1: // its actor died: reported failed, then dropped by the servers
			mustStep(t, tab, evDied{ID: id, At: t0})
			flush()
			list()
		case 2: // a late report after it was forgotten
			mustStep(t, tab, evReported{Alloc: reportOf(id, "complete")})
			flush()
			mustStep(t, tab, evReleased{ID: id})
			forgotten += len(list().Forget)
			mustStep(t, tab, evReported{Alloc: reportOf(id, "complete")})
			flush()
		}
		require.Zero(t, tab.Len(), "alloc %s left an entry (%s)", id, tab.phase(id))
	}
	require.Equal(t, 2*n/3, forgotten, "the finished ones were forgotten (their state file records deleted)")
	require.Empty(t, tab.queue)
	require.Nil(t, tab.sending)
	require.Empty(t, tab.windows())
}

// TestAllocTableResendSkipsForgotten: after a reconnect only the reports
// of allocations the client still knows go again.
func TestAllocTableResendSkipsForgotten(t *testing.T) {
	tab := newAllocTable()
	mustStep(t, tab, evListed{Index: 1, Allocs: []*messages.Allocation{tableAlloc("a", "run", "pending"), tableAlloc("b", "run", "pending")}})
	mustStep(t, tab, evReported{Alloc: reportOf("a", "complete")})
	b := reportOf("b", "running")
	mustStep(t, tab, evReported{Alloc: b})
	mustStep(t, tab, evFlushDue{})
	mustStep(t, tab, evFlushed{})
	mustStep(t, tab, evReleased{ID: "a"})
	require.Equal(t, []string{"a"}, mustStep(t, tab, evListed{Index: 2, Allocs: []*messages.Allocation{tableAlloc("b", "run", "pending")}}).Forget)
	require.Equal(t, 1, tab.Len())
	require.Equal(t, allocEffects{Flush: flushBatch}, mustStep(t, tab, evResend{}))
	require.Equal(t, []*messages.Allocation{b}, mustStep(t, tab, evFlushDue{}).Send)
}
