package main

import (
	"cmp"
	"fmt"
	"io"
	"slices"
	"strconv"

	"github.com/troupe-dev/troupe/api"
)

// preemptionDisplayThreshold is Nomad's: from this many preempted
// allocations on, `job plan` counts them per job, and from this many jobs
// on, per job type.
const preemptionDisplayThreshold = 10

// writePlanNotes writes what a plan warns of and the allocations it would
// preempt, after the dry-run's result, as Nomad's `job plan` does.
func writePlanNotes(w io.Writer, resp *api.JobPlanResponse) {
	if resp.Warnings != "" {
		fmt.Fprintf(w, "\nJob Warnings:\n%s\n", resp.Warnings)
	}
	if resp.Annotations != nil && len(resp.Annotations.PreemptedAllocs) > 0 {
		writePreemptions(w, resp.Annotations.PreemptedAllocs)
	}
}

// writePreemptions lists the allocations a plan would evict: each one
// (alloc, job, node and task group) while there are few, else the count
// per job, else per job type.
func writePreemptions(w io.Writer, allocs []*api.AllocListStub) {
	fmt.Fprint(w, "\nPreemptions:\n\n")
	if len(allocs) < preemptionDisplayThreshold {
		rows := make([][]string, 0, len(allocs))
		for _, a := range allocs {
			rows = append(rows, []string{a.ID, a.JobID, a.NodeID, a.TaskGroup})
		}
		writeTable(w, []string{"Alloc ID", "Job ID", "Node ID", "Task Group"}, rows)
		return
	}
	type jobRef struct{ id, ns, typ string }
	perJob, perType := map[jobRef]int{}, map[string]int{}
	for _, a := range allocs {
		perJob[jobRef{a.JobID, a.Namespace, a.JobType}]++
		perType[a.JobType]++
	}
	if len(perJob) < preemptionDisplayThreshold {
		refs := make([]jobRef, 0, len(perJob))
		for r := range perJob {
			refs = append(refs, r)
		}
		slices.SortFunc(refs, func(a, b jobRef) int { return cmp.Or(cmp.Compare(a.id, b.id), cmp.Compare(a.ns, b.ns)) })
		rows := make([][]string, 0, len(refs))
		for _, r := range refs {
			rows = append(rows, []string{r.id, r.ns, r.typ, strconv.Itoa(perJob[r])})
		}
		writeTable(w, []string{"Job ID", "Namespace", "Job Type", "Preemptions"}, rows)
		return
	}
	rows := make([][]string, 0, len(perType))
	for _, typ := range sortedKeys(perType) {
		rows = append(rows, []string{typ, strconv.Itoa(perType[typ])})
	}
	writeTable(w, []string{"Job Type", "Preemptions"}, rows)
}
