package safepath

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
)

// CleanRel cleans rel, a path that must stay beneath some directory: a
// leading "/" names that directory (as Nomad's alloc fs paths do), and a
// path that climbs out of it with ".." is ErrOutside.
func CleanRel(rel string) (string, error) {
	if strings.IndexByte(rel, 0) >= 0 {
		return "", fmt.Errorf("%w: NUL in path", ErrUnsafeName)
	}
	c := filepath.Clean("/" + rel)[1:]
	if c == "" {
		c = "."
	}
	// Clean of a rooted path drops leading "..": compare with the plain
	// clean so that "../x" is refused rather than taken as "x".
	if p := filepath.Clean(strings.TrimLeft(rel, "/")); p == ".." || strings.HasPrefix(p, "../") {
		return "", fmt.Errorf("%w: %s", ErrOutside, Quote(rel))
	}
	return c, nil
}

// StatIn is os.Stat of rel beneath base (see CleanRel): symlinks are
// followed only while they stay beneath base; a path that leaves it, by
// ".." or by a link, is ErrOutside.
func StatIn(base, rel string) (os.FileInfo, error) {
	var fi os.FileInfo
	err := withRoot(base, rel, func(r *os.Root, c string) (err error) {
		fi, err = r.Stat(c)
		return err
	})
	return fi, err
}

// LstatIn is os.Lstat of rel beneath base: a symlink at rel itself is
// described, not followed.
func LstatIn(base, rel string) (os.FileInfo, error) {
	var fi os.FileInfo
	err := withRoot(base, rel, func(r *os.Root, c string) (err error) {
		fi, err = r.Lstat(c)
		return err
	})
	return fi, err
}

// OpenIn opens rel beneath base read-only, a file or a directory,
// following symlinks only while they stay beneath base (ErrOutside
// otherwise). It does not block on a FIFO a task planted (O_NONBLOCK); the
// caller checks what it opened.
func OpenIn(base, rel string) (*os.File, error) {
	var f *os.File
	err := withRoot(base, rel, func(r *os.Root, c string) (err error) {
		f, err = r.OpenFile(c, os.O_RDONLY|syscall.O_NONBLOCK, 0)
		return err
	})
	return f, err
}

func withRoot(base, rel string, fn func(r *os.Root, clean string) error) error {
	c, err := CleanRel(rel)
	if err != nil {
		return err
	}
	r, err := os.OpenRoot(base)
	if err != nil {
		return err
	}
	defer r.Close()
	if err := fn(r, c); err != nil {
		if e := rootEscapes(); e != nil && errors.Is(err, e) {
			return fmt.Errorf("%w: %s: %w", ErrOutside, Quote(rel), err)
		}
		return err
	}
	return nil
}

// rootEscapes is the error os.Root gives for a path leaving it (not
// exported by package os), learnt once from a lexical escape.
var rootEscapes = sync.OnceValue(func() error {
	r, err := os.OpenRoot(os.TempDir())
	if err != nil {
		return nil
	}
	defer r.Close()
	_, err = r.Lstat("..")
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return pe.Err
	}
	return nil
})

// Escapes reports whether err is os.Root's refusal of a path that would
// leave the root.
func Escapes(err error) bool {
	e := rootEscapes()
	return err != nil && e != nil && errors.Is(err, e)
}
