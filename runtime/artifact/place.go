package artifact

import (
	"fmt"
	"os"
	"path/filepath"

	"github.com/troupe-dev/troupe/runtime/safepath"
)

// place moves what was fetched to src (a file or a directory, relative to
// taskDir) to dst (relative too) through an os.Root of taskDir, so that
// no symlink beneath it leads the move out: a file replaces what dst
// was, a directory is merged into dst, entry by entry.
func place(taskDir, src, dst string) error {
	root, err := os.OpenRoot(taskDir)
	if err != nil {
		return err
	}
	defer root.Close()
	return merge(root, src, dst)
}

func merge(root *os.Root, src, dst string) error {
	fi, err := root.Lstat(src)
	if err != nil {
		return err
	}
	if !fi.IsDir() {
		if err := root.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
			return escapes(err)
		}
		if di, err := root.Lstat(dst); err == nil && di.IsDir() {
			return fmt.Errorf("%s is a directory", dst)
		}
		return escapes(root.Rename(src, dst))
	}
	if err := root.MkdirAll(dst, 0o755); err != nil {
		return escapes(err)
	}
	d, err := root.Open(src)
	if err != nil {
		return err
	}
	entries, err := d.ReadDir(-1)
	d.Close()
	if err != nil {
		return err
	}
	for _, e := range entries {
		if err := merge(root, filepath.Join(src, e.Name()), filepath.Join(dst, e.Name())); err != nil {
			return err
		}
	}
	return nil
}

// escapes names an os.Root refusal as ErrDestinationEscapes.
func escapes(err error) error {
	if safepath.Escapes(err) {
		return fmt.Errorf("%w: %v", ErrDestinationEscapes, err)
	}
	return err
}
