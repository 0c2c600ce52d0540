package main

import (
	"fmt"
	"io"
	"strconv"
)

// evalStatusCommand is `troupe eval status [-json] ID`.
func evalStatusCommand(args []string, stdout, stderr io.Writer) int {
	m := newMeta("eval status", stdout, stderr, true)
	id, c, code, ok := m.parseOne(args, "ID")
	if !ok {
		return code
	}
	eval, err := lookupEval(c, id)
	if err != nil {
		return m.fail("querying evaluation", err)
	}
	if m.json {
		return m.printJSON(eval)
	}
	failures := len(eval.FailedTGAllocs) > 0
	writeKV(m.stdout, []kv{
		{"ID", eval.ID},
		{"Create Time", timeAgo(eval.CreateTime)},
		{"Modify Time", timeAgo(eval.ModifyTime)},
		{"Status", eval.Status},
		{"Status Description", orNone(eval.StatusDescription)},
		{"Type", eval.Type},
		{"TriggeredBy", eval.TriggeredBy},
		{"Job ID", eval.JobID},
		{"Priority", strconv.Itoa(int(eval.Priority))},
		{"Placement Failures", strconv.FormatBool(failures)},
	})
	if !failures {
		return exitOK
	}
	fmt.Fprintln(m.stdout, "\n==> Failed Placements")
	writePlacementFailures(m.stdout, eval.FailedTGAllocs, "")
	if eval.BlockedEval != "" {
		fmt.Fprintf(m.stdout, "\nEvaluation %q waiting for additional capacity to place remainder\n", shortID(eval.BlockedEval))
	}
	return exitOK
}
