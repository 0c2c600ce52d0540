package driver

// Isolation asks a driver that isolates (exec) to run the task in a root
// of its own, in its own mount, pid and ipc namespaces, as Nomad's exec
// driver does. A nil TaskConfig.Isolation runs the task in the host's
// filesystem and namespaces (a CSI plugin task, which mounts for the host).
type Isolation struct {
	// AllocDir is the allocation's shared directory (<alloc>/alloc), the
	// task's /alloc. The task's /local, /secrets and /tmp are the local,
	// secrets and tmp directories of TaskConfig.TaskDir.
	AllocDir string
	// Mounts are bind-mounted into the task's root (its volumes).
	Mounts []Mount
}

// Mount is a bind mount of a host path into a task's root.
type Mount struct {
	Source      string
	Destination string // absolute, inside the task's root
	ReadOnly    bool
}

// Where an isolated task sees its directories (Nomad's names).
const (
	TaskAllocDir   = "/alloc"
	TaskLocalDir   = "/local"
	TaskSecretsDir = "/secrets"
	TaskTmpDir     = "/tmp"
)
