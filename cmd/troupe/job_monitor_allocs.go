package main

import (
	"context"
	"fmt"
	"io"
	"sort"

	"github.com/troupe-dev/troupe/api"
	"github.com/troupe-dev/troupe/messages"
)

// recentEvents is how many task events a failed allocation shows.
const recentEvents = 5

// followAllocs waits until every allocation of eval runs (or, for batch
// jobs, runs or completes), printing each status change. A failed or lost
// allocation ends it with exitPlacing.
func (m *monitor) followAllocs(ctx context.Context, eval *messages.Evaluation, allocs []*api.AllocListStub, index uint64) (int, error) {
	last := map[string]string{}
	for _, a := range allocs {
		last[a.ID] = messages.AllocClientStatusPending
		if updatedInPlace(a, eval) { // it did not start anew: only changes from now on
			last[a.ID] = a.ClientStatus
		}
	}
	for {
		var failed *api.AllocListStub
		for _, a := range allocs {
			m.printChange(a, last)
			if a.ClientStatus == messages.AllocClientStatusFailed || a.ClientStatus == messages.AllocClientStatusLost {
				failed = a
			}
		}
		if failed != nil {
			return m.allocFailed(ctx, failed)
		}
		if len(allocs) == 0 {
			m.headline("No allocations of evaluation %q remain to run", shortID(eval.ID))
			return exitOK, nil
		}
		if allSettled(allocs) {
			m.headline("All %d %s of evaluation %q are %s", len(allocs), plural(len(allocs), "allocation"), shortID(eval.ID), settledWord(eval.Type))
			return exitOK, nil
		}
		var err error
		prev := index
		if allocs, index, err = m.evalAllocs(ctx, eval, index); err != nil {
			return exitError, err
		}
		if index, err = m.next(ctx, prev, index); err != nil {
			return exitError, m.wrapCtx(ctx, "allocations", err)
		}
	}
}

func (m *monitor) printChange(a *api.AllocListStub, last map[string]string) {
	status := a.ClientStatus
	if status == "" || status == last[a.ID] {
		return
	}
	desc := ""
	if a.ClientDescription != "" {
		desc = fmt.Sprintf(" (%s)", a.ClientDescription)
	}
	fmt.Fprintf(m.out, "    Allocation %q status changed: %q -> %q%s\n", shortID(a.ID), orNone(last[a.ID]), status, desc)
	last[a.ID] = status
}

// allSettled: every allocation is running, or complete (any type: a
// completed allocation will not change any more).
func allSettled(allocs []*api.AllocListStub) bool {
	for _, a := range allocs {
		if a.ClientStatus != messages.AllocClientStatusRunning && a.ClientStatus != messages.AllocClientStatusComplete {
			return false
		}
	}
	return true
}

func settledWord(jobType string) string {
	if jobType == "batch" || jobType == "sysbatch" {
		return "running or complete"
	}
	return "running"
}

// allocFailed prints a failed allocation's recent task events.
func (m *monitor) allocFailed(ctx context.Context, stub *api.AllocListStub) (int, error) {
	m.headline("Allocation %q %s", shortID(stub.ID), stub.ClientStatus)
	states := stub.TaskStates
	if alloc, _, err := m.c.Allocations().Info(stub.ID, (&api.QueryOptions{}).WithContext(ctx)); err == nil && alloc.TaskStates != nil {
		states = alloc.TaskStates
	}
	for _, name := range sortedKeys(states) {
		st := states[name]
		fmt.Fprintf(m.out, "    Task %q is %q (failed: %t); recent events:\n", name, st.GetState(), st.GetFailed())
		writeEvents(m.out, "      ", lastEvents(st.GetEvents(), recentEvents), false)
	}
	return exitPlacing, nil
}

// lastEvents is the n newest events, oldest first.
func lastEvents(events []*messages.TaskEvent, n int) []*messages.TaskEvent {
	sorted := append([]*messages.TaskEvent(nil), events...)
	sort.SliceStable(sorted, func(i, j int) bool { return sorted[i].Time < sorted[j].Time })
	if len(sorted) > n {
		sorted = sorted[len(sorted)-n:]
	}
	return sorted
}

// writeEvents writes a Time/Type/Description table of task events,
// newest first when newestFirst.
func writeEvents(w io.Writer, indent string, events []*messages.TaskEvent, newestFirst bool) {
	rows := make([][]string, 0, len(events))
	for _, e := range events {
		rows = append(rows, []string{formatTime(e.Time), e.Type, eventDescription(e)})
	}
	if newestFirst {
		for i, j := 0, len(rows)-1; i < j; i, j = i+1, j-1 {
			rows[i], rows[j] = rows[j], rows[i]
		}
	}
	writeIndentedTable(w, indent, []string{"Time", "Type", "Description"}, rows)
}

// eventDescription is what an event says, best first.
func eventDescription(e *messages.TaskEvent) string {
	switch {
	case e.DisplayMessage != "":
		return e.DisplayMessage
	case e.DriverError != "":
		return e.DriverError
	case e.Message != "":
		return e.Message
	case e.Type == "Terminated":
		return fmt.Sprintf("Exit Code: %d", e.ExitCode)
	default:
		return ""
	}
}

// writePlacementFailures writes Nomad's "failed to place" block.
func writePlacementFailures(w io.Writer, failed map[string]*messages.AllocMetric, indent string) {
	for _, tg := range sortedKeys(failed) {
		metric := failed[tg]
		n := int(metric.GetCoalescedFailures()) + 1
		fmt.Fprintf(w, "%sTask Group %q (failed to place %d %s):\n", indent, tg, n, plural(n, "allocation"))
		for _, line := range metricReasons(metric) {
			fmt.Fprintf(w, "%s  * %s\n", indent, line)
		}
	}
}

// metricReasons explains an AllocMetric, one reason per line, as Nomad.
func metricReasons(m *messages.AllocMetric) []string {
	var out []string
	if m.GetNodesEvaluated() == 0 {
		out = append(out, "No nodes were eligible for evaluation")
	}
	if m.GetNodePool() != "" && m.GetNodesInPool() == 0 {
		out = append(out, fmt.Sprintf("No nodes are available in node pool %q", m.NodePool))
	}
	for _, dc := range sortedKeys(m.GetNodesAvailable()) {
		if m.NodesAvailable[dc] == 0 {
			out = append(out, fmt.Sprintf("No nodes are available in datacenter %q", dc))
		}
	}
	for _, class := range sortedKeys(m.GetClassFiltered()) {
		out = append(out, fmt.Sprintf("Class %q: %d nodes excluded by filter", class, m.ClassFiltered[class]))
	}
	for _, c := range sortedKeys(m.GetConstraintFiltered()) {
		out = append(out, fmt.Sprintf("Constraint %q: %d nodes excluded by filter", c, m.ConstraintFiltered[c]))
	}
	if m.GetNodesExhausted() > 0 {
		out = append(out, fmt.Sprintf("Resources exhausted on %d nodes", m.NodesExhausted))
	}
	for _, class := range sortedKeys(m.GetClassExhausted()) {
		out = append(out, fmt.Sprintf("Class %q exhausted on %d nodes", class, m.ClassExhausted[class]))
	}
	for _, dim := range sortedKeys(m.GetDimensionExhausted()) {
		out = append(out, fmt.Sprintf("Dimension %q exhausted on %d nodes", dim, m.DimensionExhausted[dim]))
	}
	return out
}
