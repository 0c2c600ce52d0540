package main

import (
	"fmt"
	"io"
	"time"

	"github.com/troupe-dev/troupe/api"
)

// nodeDrainCommand is `troupe node drain -enable [-deadline D]
// [-force] [-ignore-system] ID` and `troupe node drain -disable
// [-keep-ineligible] ID`.
func nodeDrainCommand(args []string, stdout, stderr io.Writer) int {
	m := newMeta("node drain", stdout, stderr, false)
	enable := m.fs.Bool("enable", false, "start draining the node")
	disable := m.fs.Bool("disable", false, "stop draining the node")
	deadline := m.fs.Duration("deadline", time.Hour, "after this, remaining allocations are stopped")
	noDeadline := m.fs.Bool("no-deadline", false, "drain without a deadline")
	force := m.fs.Bool("force", false, "stop every allocation now")
	ignoreSystem := m.fs.Bool("ignore-system", false, "leave system jobs' allocations running")
	keepIneligible := m.fs.Bool("keep-ineligible", false, "with -disable: keep the node ineligible")
	rest, code, ok := m.parse(args)
	if !ok {
		return code
	}
	if len(rest) != 1 || *enable == *disable {
		return m.usageError("-enable [-deadline 1h] [-ignore-system] ID | -disable ID")
	}
	c, err := m.client()
	if err != nil {
		return m.fail("creating the API client", err)
	}
	node, err := lookupNode(c, rest[0])
	if err != nil {
		return m.fail("querying node", err)
	}
	var spec *api.DrainSpec
	if *enable {
		spec = &api.DrainSpec{Deadline: int64(*deadline), IgnoreSystemJobs: *ignoreSystem}
		switch {
		case *force:
			spec.Deadline = -1
		case *noDeadline:
			spec.Deadline = 0
		}
	}
	if _, err := c.Nodes().UpdateDrain(node.ID, spec, *disable && !*keepIneligible, nil); err != nil {
		return m.fail("updating drain", err)
	}
	if *enable {
		fmt.Fprintf(m.stdout, "Node %q drain strategy set\n", node.ID)
	} else {
		fmt.Fprintf(m.stdout, "Node %q drain strategy unset\n", node.ID)
	}
	return exitOK
}
