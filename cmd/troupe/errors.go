package main

import "errors"

var (
	// errNoMatch: no object has the given ID or ID prefix.
	errNoMatch = errors.New("troupe: no match")
	// errAmbiguous: an ID prefix matches several objects.
	errAmbiguous = errors.New("troupe: ambiguous prefix")
	// errTimeout: a monitor gave up waiting.
	errTimeout = errors.New("troupe: timed out")
	// errBadJobFile: a job file could not be read or decoded.
	errBadJobFile = errors.New("troupe: bad job file")
	// errNoTask: the task to act on is missing or ambiguous.
	errNoTask = errors.New("troupe: task not found")
	// errIsDir: a file operation (-f, -tail) was asked of a directory.
	errIsDir = errors.New("troupe: is a directory")
)
