package exec

import (
	"fmt"
	"io/fs"
	"os"
	"syscall"
)

// ownSecrets gives the task's secrets dir on the host (on a root agent,
// the tmpfs the client mounted there; else a plain dir) to the task's
// user, mode 0700, and with it what the client wrote there before the
// start (its workload identity files, the templates rendered there; the
// client's, so root's): a file the client writes later takes the dir's
// owner itself. What another user owns (a template's uid, the task's own
// files) keeps its owner. Links are changed, never followed; the walk
// stays in the dir (os.Root). The dir is then bound at /secrets, so the
// task sees what the client writes there while it runs.
func ownSecrets(dir string, uid, gid uint32) error {
	if err := os.Chmod(dir, 0o700); err != nil {
		return fmt.Errorf("secrets: %w", err)
	}
	if err := os.Lchown(dir, int(uid), int(gid)); err != nil {
		return fmt.Errorf("secrets: %w", err)
	}
	r, err := os.OpenRoot(dir)
	if err != nil {
		return fmt.Errorf("secrets: %w", err)
	}
	defer r.Close()
	return fs.WalkDir(r.FS(), ".", func(p string, d fs.DirEntry, err error) error {
		if err != nil || p == "." {
			return err
		}
		info, err := d.Info()
		if err != nil {
			return err
		}
		if st, ok := info.Sys().(*syscall.Stat_t); !ok || st.Uid != 0 {
			return nil
		}
		if err := r.Lchown(p, int(uid), int(gid)); err != nil {
			return fmt.Errorf("secrets: %w", err)
		}
		return nil
	})
}
