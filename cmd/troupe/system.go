package main

import "io"

// systemGCCommand is `troupe system gc`: a forced garbage collection
// (terminal evaluations, finished batch jobs and their allocations, down
// nodes, unused plugins), whatever their age.
func systemGCCommand(args []string, stdout, stderr io.Writer) int {
	m := newMeta("system gc", stdout, stderr, false)
	c, code, ok := m.parseNone(args)
	if !ok {
		return code
	}
	if err := c.System().GarbageCollect(); err != nil {
		return m.fail("running the garbage collector", err)
	}
	return exitOK
}
