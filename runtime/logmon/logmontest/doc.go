// Package logmontest checks rotated task logs in tests: Follow reads a log
// from its start across rotation, as `troupe alloc logs -f` does, while a
// task writes it; Lines makes numbered lines to compare with; CheckFiles
// checks what is on disk against the logs block. Import it from _test.go
// files only.
//
//	f := logmontest.Follow(cfg.StdoutPath + "", "line 5000\n")
//	... start the task that prints "line 1" .. "line 5000" ...
//	require.Equal(t, logmontest.Lines(1, 5000), f.Wait(t, time.Minute))
//	logmontest.CheckFiles(t, cfg.StdoutPath, 3, 4096)
package logmontest
