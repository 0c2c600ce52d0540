package logrotate

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"syscall"
)

// Options size a rotated log.
type Options struct {
	// MaxFiles is how many files are kept, the one being written included.
	MaxFiles int
	// MaxBytes is the most a file holds.
	MaxBytes int64
	// OpenFile opens a log file (nil: os.OpenFile); the executor, which
	// runs as root, passes one that refuses a symlink.
	OpenFile func(path string, flag int, perm os.FileMode) (*os.File, error)
	// Remove deletes a file beyond MaxFiles (nil: os.Remove).
	Remove func(path string) error
}

// Writer writes a log into rotated files. It is for one writer: neither
// two goroutines nor two Writers on one base may write at once.
type Writer struct {
	base string
	opts Options
	idx  int      // index of the file being written
	f    *os.File // nil after a failed open: the next Write tries again
	size int64    // bytes in f
	// purgeErr is the last failure to delete old files, reported by the
	// Write that rotated after its bytes are written.
	purgeErr error
}

// NewWriter opens the log at base, continuing its highest file (base.0 for
// a new log), and deletes the oldest files beyond opts.MaxFiles.
func NewWriter(base string, opts Options) (*Writer, error) {
	if opts.MaxFiles < 1 || opts.MaxBytes < 1 {
		return nil, fmt.Errorf("%w: got %d files of %d bytes", ErrOptions, opts.MaxFiles, opts.MaxBytes)
	}
	if opts.OpenFile == nil {
		opts.OpenFile = os.OpenFile
	}
	if opts.Remove == nil {
		opts.Remove = os.Remove
	}
	idx, err := indexes(base)
	if err != nil {
		return nil, err
	}
	w := &Writer{base: base, opts: opts}
	if len(idx) > 0 {
		w.idx = idx[len(idx)-1]
	}
	if err := w.open(); err != nil {
		return nil, err
	}
	if err := w.purgeErr; err != nil {
		w.Close()
		return nil, err
	}
	return w, nil
}

// Write appends p to the log. What does not fit the current file goes to
// the next: cut after the last newline that fits, or, when none does,
// into a fresh file (a line longer than a file is cut where a file is
// full).
func (w *Writer) Write(p []byte) (int, error) {
	written := 0
	for len(p) > 0 {
		if w.f == nil {
			if err := w.open(); err != nil {
				return written, err
			}
		}
		n := w.fit(p)
		if n == 0 {
			if err := w.rotate(); err != nil {
				return written, err
			}
			continue
		}
		m, err := w.f.Write(p[:n])
		written += m
		w.size += int64(m)
		p = p[m:]
		if err != nil {
			return written, err
		}
	}
	err := w.purgeErr
	w.purgeErr = nil
	return written, err
}

// fit is how much of p goes into the current file: all of it when it
// fits, else up to the last newline that fits, else as much as fits when
// the file is empty; 0 means rotate first.
func (w *Writer) fit(p []byte) int {
	room := w.opts.MaxBytes - w.size
	if room <= 0 {
		return 0
	}
	if int64(len(p)) <= room {
		return len(p)
	}
	if i := bytes.LastIndexByte(p[:room], '\n'); i >= 0 {
		return i + 1
	}
	if w.size == 0 {
		return int(room)
	}
	return 0
}

// Close closes the current file.
func (w *Writer) Close() error {
	if w.f == nil {
		return nil
	}
	err := w.f.Close()
	w.f = nil
	return err
}

// rotate closes the current file and opens the next index.
func (w *Writer) rotate() error {
	if err := w.Close(); err != nil {
		return err
	}
	w.idx++
	return w.open()
}

// open opens the file of the current index for appending, deleting
// first the oldest files so that, with it, MaxFiles are left (a failure to
// delete is kept in purgeErr: it must not lose the bytes to write).
// O_NONBLOCK: a fifo planted under the name must not block the writer (it
// is refused as not a regular file).
func (w *Writer) open() error {
	w.purgeErr = w.purge()
	name := fileName(w.base, w.idx)
	f, err := w.opts.OpenFile(name, os.O_CREATE|os.O_WRONLY|os.O_APPEND|syscall.O_NONBLOCK, 0o644)
	if err != nil {
		return err
	}
	st, err := f.Stat()
	if err == nil && !st.Mode().IsRegular() {
		err = fmt.Errorf("%w: %s", ErrNotRegular, name)
	}
	if err != nil {
		f.Close()
		return err
	}
	w.f, w.size = f, st.Size()
	return nil
}

// purge deletes the oldest files below the current index so that
// MaxFiles-1 are left: with the current one, never more than MaxFiles are
// on disk. Files of a higher index are not this writer's and are left
// alone.
func (w *Writer) purge() error {
	idx, err := indexes(w.base)
	if err != nil {
		return err
	}
	var mine []int
	for _, n := range idx {
		if n < w.idx {
			mine = append(mine, n)
		}
	}
	var errs []error
	for len(mine) > w.opts.MaxFiles-1 {
		if err := w.opts.Remove(fileName(w.base, mine[0])); err != nil && !errors.Is(err, os.ErrNotExist) {
			errs = append(errs, err)
		}
		mine = mine[1:]
	}
	return errors.Join(errs...)
}

// Pump copies r into w until r ends (io.EOF). A failed write loses that
// chunk but the copy goes on, so that the process writing into r never
// blocks on a full pipe; Pump returns the first write error, or r's error
// other than EOF.
func Pump(r io.Reader, w io.Writer) error {
	buf := make([]byte, 64<<10)
	var werr error
	for {
		n, err := r.Read(buf)
		if n > 0 {
			if _, e := w.Write(buf[:n]); e != nil && werr == nil {
				werr = e
			}
		}
		if errors.Is(err, io.EOF) {
			return werr
		}
		if err != nil {
			return errors.Join(werr, err)
		}
	}
}
