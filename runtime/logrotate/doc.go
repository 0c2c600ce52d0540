// Package logrotate keeps a task's stdout or stderr in rotated files and
// reads them back in order, as Nomad's logmon and logs API do.
//
// A log is named by its base path: its files are <base>.0, <base>.1, ...
// (Nomad's layout is <alloc>/alloc/logs/<task>.stdout, troupe's older one
// <taskdir>/stdout). The index only grows: the highest is the file being
// written, the lowest the oldest kept.
//
// Writer is the writing side, for one writer at a time (the exec driver's
// executor, or the log forwarder of runtime/logmon for containerd and
// qemu tasks: processes that outlive agent restarts, so rotation goes on
// while the agent is down). It continues the highest existing file and opens the
// next index when a write would take the current file past
// Options.MaxBytes (cutting after the last newline that fits; a write that
// ended mid-line near the end of a file has the rest of that line go to
// the next file), deleting first the oldest files so that, with the new
// one, never more than Options.MaxFiles are on disk. Pump copies a pipe's read end
// into a Writer until EOF.
//
// Reader is the reading side: Open positions it as Nomad's logs API does
// (from the start or the end of the whole log, an offset counted across
// files), and Read returns the bytes in order across rotation. It moves on
// from a file only once a higher index exists and the file, read again,
// has nothing more: the writer creates the next file after its last write
// to this one, so no byte is lost or repeated. Files deleted under it are
// skipped to the oldest one left. At the end of what is written so far Read
// returns io.EOF; a follower polls again later. A base with no numbered
// files but a plain file at the base path itself (a driver that writes its
// own log, or a task started before rotation) is read as that one file.
package logrotate
