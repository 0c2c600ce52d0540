package safepath

import (
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"path/filepath"
)

// inRoot runs fn with base opened as an os.Root and path relative to it.
func inRoot(base, path string, fn func(r *os.Root, rel string) error) error {
	rel, err := Rel(base, path)
	if err != nil {
		return err
	}
	r, err := os.OpenRoot(base)
	if err != nil {
		return err
	}
	defer r.Close()
	return fn(r, rel)
}

// MkdirAll makes the directory path, beneath base, and its missing parents
// with perm. A symlink on the way that leads out of base is an error, and
// nothing is made outside. Base itself (trusted) is made first when
// missing.
func MkdirAll(base, path string, perm os.FileMode) error {
	if _, err := Rel(base, path); err != nil {
		return err
	}
	if err := os.MkdirAll(base, perm); err != nil {
		return err
	}
	return inRoot(base, path, func(r *os.Root, rel string) error { return r.MkdirAll(rel, perm) })
}

// OpenFile opens the file path, beneath base, like os.OpenFile. A symlink
// on the way that leads out of base is an error, and so is a symlink at
// path itself, wherever it points (the agent, as root, must not append a
// task's output to a file a link names, in the allocation dir or not), or
// anything there that is not a regular file.
func OpenFile(base, path string, flag int, perm os.FileMode) (*os.File, error) {
	dir, name := filepath.Split(path)
	if err := CheckName("file", name); err != nil {
		return nil, err
	}
	var f *os.File
	err := inRoot(base, filepath.Clean(dir), func(r *os.Root, rel string) error {
		d, err := r.Open(rel)
		if err != nil {
			return err
		}
		defer d.Close()
		if f, err = openNoFollow(d, name, flag, perm); err != nil {
			return fmt.Errorf("safepath: open %s: %w", path, err)
		}
		fi, err := f.Stat()
		if err == nil && !fi.Mode().IsRegular() {
			err = fmt.Errorf("%w: %s is not a regular file", ErrSymlink, path)
		}
		if err != nil {
			f.Close()
			f = nil
		}
		return err
	})
	return f, err
}

// WriteFileAtomic writes data to the file path, beneath base, through a
// synced temp file beside it and a rename, so readers see the old file or
// the whole new one. The rename replaces a symlink at path, never its
// target.
func WriteFileAtomic(base, path string, data []byte, perm os.FileMode) error {
	return inRoot(base, path, func(r *os.Root, rel string) error {
		tmp := rel + ".tmp" + randomSuffix()
		f, err := r.OpenFile(tmp, os.O_WRONLY|os.O_CREATE|os.O_EXCL, perm)
		if err != nil {
			return err
		}
		defer r.Remove(tmp) // a no-op once renamed
		_, err = f.Write(data)
		if err == nil {
			err = f.Sync()
		}
		if cerr := f.Close(); err == nil {
			err = cerr
		}
		if err != nil {
			return err
		}
		return r.Rename(tmp, rel)
	})
}

// RemoveAll removes path, beneath base, and everything in it. A symlink
// (at path or below it) is removed itself, never what it points to; one on
// the way to path that leads out of base is an error. A missing path is
// no error.
func RemoveAll(base, path string) error {
	err := inRoot(base, path, func(r *os.Root, rel string) error {
		if rel == "." {
			return errors.New("safepath: will not remove the base directory itself")
		}
		return r.RemoveAll(rel)
	})
	if errors.Is(err, os.ErrNotExist) && dirExists(base) {
		return nil
	}
	return err
}

func dirExists(p string) bool {
	fi, err := os.Stat(p)
	return err == nil && fi.IsDir()
}

func randomSuffix() string {
	b := make([]byte, 6)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}

// Lstat is os.Lstat of path, beneath base, without following a symlink at
// path itself.
func Lstat(base, path string) (os.FileInfo, error) {
	var fi os.FileInfo
	err := inRoot(base, path, func(r *os.Root, rel string) error {
		var err error
		fi, err = r.Lstat(filepath.Clean(rel))
		return err
	})
	return fi, err
}
