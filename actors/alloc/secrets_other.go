//go:build !linux

package alloc

// SecretsTmpfs reports whether this agent can give each task's secrets
// dir its own tmpfs: only on Linux.
func SecretsTmpfs() (bool, string) {
	return false, "not Linux: the tasks' secrets dirs are plain directories on disk"
}

func mountSecrets(string) error { return nil }

func secretsMounted([]string) bool { return false }

func unmountSecrets(string) error { return nil }

func secretsOwner(string, string) (int, int) { return -1, -1 }
