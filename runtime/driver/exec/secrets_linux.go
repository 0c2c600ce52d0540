package exec

import (
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
)

// maxSecretsSeed bounds what seedSecrets copies (the /secrets tmpfs holds
// 1 MiB).
const maxSecretsSeed = 1 << 20

// seedSecrets copies what the client wrote into the task's secrets dir on
// the host (its workload identity files, templates rendered there before
// the start) into the task's fresh /secrets tmpfs, owned by the task's
// user with their modes. Links are not followed (nor copied); the walk
// stays in the host dir (os.Root).
func seedSecrets(hostDir, dst string, uid, gid uint32) error {
	r, err := os.OpenRoot(hostDir)
	if err != nil {
		return fmt.Errorf("secrets: %w", err)
	}
	defer r.Close()
	total := 0
	return fs.WalkDir(r.FS(), ".", func(p string, d fs.DirEntry, err error) error {
		if err != nil || p == "." {
			return err
		}
		target := filepath.Join(dst, p)
		info, err := d.Info()
		if err != nil {
			return err
		}
		switch {
		case d.IsDir():
			if err := os.Mkdir(target, 0o700); err != nil && !os.IsExist(err) {
				return err
			}
			return own(target, info.Mode().Perm(), uid, gid)
		case !info.Mode().IsRegular():
			return nil
		}
		b, err := r.ReadFile(p)
		if err != nil {
			return err
		}
		if total += len(b); total > maxSecretsSeed {
			return fmt.Errorf("secrets: more than %d bytes to copy into /secrets", maxSecretsSeed)
		}
		if err := os.WriteFile(target, b, 0o600); err != nil {
			return err
		}
		return own(target, info.Mode().Perm(), uid, gid)
	})
}

// own gives path (just made, in the tmpfs) its mode and the task's user.
func own(path string, mode os.FileMode, uid, gid uint32) error {
	if err := os.Chmod(path, mode); err != nil {
		return err
	}
	return os.Lchown(path, int(uid), int(gid))
}
