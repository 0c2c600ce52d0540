// Package syncbuf is a byte buffer safe to write on one goroutine and
// read on another: the sink for an agent's log, a process's output or a
// pty's copier that a test reads while they still write.
package syncbuf
