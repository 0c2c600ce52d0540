// Package clientstate is the client's local state file: a bbolt database in
// the data dir holding every allocation the client runs, each task's state,
// each task's driver handle, each CSI volume's mount record and each bridge
// network's CNI result (AllocNetwork), so that a restarted agent (or a
// rebooted host) restores its allocations, re-attaches to running tasks
// instead of starting them twice, finishes mounting or unmounting volumes
// where it stopped, and restores or tears down networks it set up.
//
// Task handles (PutTaskHandle), volume records (PutVolumeMount) and
// network records (PutNetwork, DeleteNetwork) are written synchronously,
// from workers, before the step they describe runs. Status writes
// (PutAlloc, PutTaskState) go through one ordered background writer so
// actors never wait on the disk; Flush waits for it.
package clientstate
