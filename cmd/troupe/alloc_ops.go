package main

import (
	"fmt"
	"io"

	"github.com/troupe-dev/troupe/messages"
)

// allocSignalCommand is `troupe alloc signal [-s SIG] [-task T] ID [TASK]`:
// the signal goes to the named task, or to every running task of the
// allocation (SIGKILL without -s, as Nomad's).
func allocSignalCommand(args []string, stdout, stderr io.Writer) int {
	m := newMeta("alloc signal", stdout, stderr, false)
	sig := m.fs.String("s", "SIGKILL", "the signal to send")
	taskFlag := m.fs.String("task", "", "the task to signal (over the TASK argument)")
	rest, code, ok := m.parse(args)
	if !ok {
		return code
	}
	if len(rest) < 1 || len(rest) > 2 {
		return m.usageError("ID [TASK]")
	}
	c, alloc, code, ok := m.allocClient(rest[0])
	if !ok {
		return code
	}
	task, err := namedTask(alloc, *taskFlag, rest[1:])
	if err != nil {
		return m.fail("choosing the task", err)
	}
	if err := c.Allocations().Signal(alloc.ID, task, *sig, nil); err != nil {
		return m.fail("signalling allocation", err)
	}
	fmt.Fprintf(stdout, "Sent %s to %s\n", *sig, opTarget(alloc.ID, task, "every running task"))
	return 0
}

// allocRestartCommand is `troupe alloc restart [-task T] [-all-tasks] ID
// [TASK]`: the named task, or every running task (-all-tasks: every task),
// restarts in place, counted against nothing.
func allocRestartCommand(args []string, stdout, stderr io.Writer) int {
	m := newMeta("alloc restart", stdout, stderr, false)
	taskFlag := m.fs.String("task", "", "the task to restart (over the TASK argument)")
	all := m.fs.Bool("all-tasks", false, "restart every task, also those that already ran")
	rest, code, ok := m.parse(args)
	if !ok {
		return code
	}
	if len(rest) < 1 || len(rest) > 2 {
		return m.usageError("ID [TASK]")
	}
	if *all && (*taskFlag != "" || len(rest) == 2) {
		fmt.Fprintln(stderr, "Error: -all-tasks excludes -task and the TASK argument")
		return 1
	}
	c, alloc, code, ok := m.allocClient(rest[0])
	if !ok {
		return code
	}
	task, err := namedTask(alloc, *taskFlag, rest[1:])
	if err != nil {
		return m.fail("choosing the task", err)
	}
	if err := c.Allocations().Restart(alloc.ID, task, *all, nil); err != nil {
		return m.fail("restarting allocation", err)
	}
	what := "every running task"
	if *all {
		what = "every task"
	}
	fmt.Fprintf(stdout, "Restarted %s\n", opTarget(alloc.ID, task, what))
	return 0
}

// namedTask is the task -task or the argument names (-task wins, as with
// Nomad), checked against the allocation; "" when neither names one.
func namedTask(a *messages.Allocation, flagTask string, args []string) (string, error) {
	switch {
	case flagTask != "":
		return pickTask(a, []string{flagTask})
	case len(args) == 1:
		return pickTask(a, args)
	}
	return "", nil
}

// opTarget says what an operation reached: the task of the allocation, or
// all (every running task...) of it.
func opTarget(allocID, task, all string) string {
	if task == "" {
		return fmt.Sprintf("%s of allocation %s", all, shortID(allocID))
	}
	return fmt.Sprintf("task %q of allocation %s", task, shortID(allocID))
}
