// Package clientstate is the client's local state file: a bbolt database in
// the data dir holding every allocation the client runs, each task's state
// and each task's driver handle, so that a restarted agent (or a rebooted
// host) restores its allocations and re-attaches to running tasks instead of
// starting them twice.
//
// Task handles are written synchronously (PutTaskHandle) from the worker
// that started the task, before the actor learns the task runs. Status
// writes (PutAlloc, PutTaskState) go through one ordered background writer
// so actors never wait on the disk; Flush waits for it.
package clientstate
