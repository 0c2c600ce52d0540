package logrotate

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"syscall"
)

// plainIndex is Reader.idx for a log read as the one file at its base.
const plainIndex = -1

// Reader reads a rotated log in order, across rotation. It is for one
// goroutine.
type Reader struct {
	base string
	idx  int      // index of the file read, or plainIndex
	f    *os.File // nil: the file of idx is to be opened (or is gone)
	off  int64    // offset in the file after the last byte read
}

// Open positions a Reader on the log at base, as Nomad's logs API does:
// offset bytes after the start of the oldest file kept, or, fromEnd,
// before the end of the newest, counted across files and clamped to the
// log. A log with no file yet is ErrNoLog.
func Open(base string, fromEnd bool, offset int64) (*Reader, error) {
	if offset < 0 {
		return nil, ErrOffset
	}
	idx, err := indexes(base)
	if err != nil {
		return nil, err
	}
	if len(idx) == 0 {
		return openPlain(base, fromEnd, offset)
	}
	sizes := make([]int64, len(idx))
	for i, n := range idx {
		if st, err := os.Lstat(fileName(base, n)); err == nil {
			sizes[i] = st.Size()
		}
	}
	i, off := locate(sizes, fromEnd, offset)
	r := &Reader{base: base, idx: idx[i]}
	if err := r.openAt(off); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return nil, err
	}
	// A file deleted since the listing: Read goes on to the oldest left.
	return r, nil
}

// openPlain reads the one file at base (a log nobody rotates).
func openPlain(base string, fromEnd bool, offset int64) (*Reader, error) {
	r := &Reader{base: base, idx: plainIndex}
	if err := r.openAt(0); errors.Is(err, fs.ErrNotExist) {
		return nil, fmt.Errorf("%w: %s", ErrNoLog, base)
	} else if err != nil {
		return nil, err
	}
	st, err := r.f.Stat()
	if err != nil {
		r.Close()
		return nil, err
	}
	_, off := locate([]int64{st.Size()}, fromEnd, offset)
	if r.off, err = r.f.Seek(off, io.SeekStart); err != nil {
		r.Close()
		return nil, err
	}
	return r, nil
}

// locate finds where to start in files of these sizes (oldest first):
// offset bytes from the start, or fromEnd before the end, clamped.
func locate(sizes []int64, fromEnd bool, offset int64) (int, int64) {
	last := len(sizes) - 1
	if !fromEnd {
		i := 0
		for i < last && offset > sizes[i] {
			offset -= sizes[i]
			i++
		}
		return i, min(offset, sizes[i])
	}
	i := last
	for i > 0 && offset > sizes[i] {
		offset -= sizes[i]
		i--
	}
	return i, max(sizes[i]-offset, 0)
}

// Read reads the next bytes of the log; io.EOF means none are written yet.
func (r *Reader) Read(p []byte) (int, error) {
	for {
		if r.f == nil {
			err := r.openAt(0)
			if err == nil {
				continue
			}
			if !errors.Is(err, fs.ErrNotExist) {
				return 0, err
			}
			if ok, err := r.skip(); !ok {
				return 0, err
			}
			continue
		}
		if n, err := r.read(p); n > 0 || err != nil {
			return n, err
		}
		if r.idx == plainIndex {
			return 0, io.EOF
		}
		next, err := r.next()
		if next < 0 {
			return 0, err
		}
		// The writer opened the next file after its last write to this
		// one: what this one holds now is all it will ever hold.
		if n, err := r.read(p); n > 0 || err != nil {
			return n, err
		}
		r.f.Close()
		r.f, r.idx, r.off = nil, next, 0
	}
}

// read reads from the current file; EOF is (0, nil).
func (r *Reader) read(p []byte) (int, error) {
	n, err := r.f.Read(p)
	r.off += int64(n)
	if errors.Is(err, io.EOF) {
		err = nil
	}
	return n, err
}

// skip moves past a file that is gone to the next one there is; false
// when there is none yet (with io.EOF) or listing failed.
func (r *Reader) skip() (bool, error) {
	next, err := r.next()
	if next < 0 {
		return false, err
	}
	r.idx, r.off = next, 0
	return true, nil
}

// next is the lowest index above the current one, -1 with io.EOF when
// there is none. A directory listing taken while the writer rotates may
// show a later file without one before it (ext4 lists by hash, not by
// creation; skipping it lost a whole file), so the indexes between the
// current one and the listing's are looked at by name: the writer creates
// them in order, and one missing by name after a later one was listed was
// deleted.
func (r *Reader) next() (int, error) {
	idx, err := indexes(r.base)
	if err != nil {
		return -1, err
	}
	for _, n := range idx {
		if n <= r.idx {
			continue
		}
		for i := r.idx + 1; i < n; i++ {
			if st, err := os.Lstat(fileName(r.base, i)); err == nil && st.Mode().IsRegular() {
				return i, nil
			}
		}
		return n, nil
	}
	return -1, io.EOF
}

// openAt opens the current file at off. The agent reads as root: a
// symlink is not followed, and a fifo (O_NONBLOCK: no wait for a writer)
// or a device is refused.
func (r *Reader) openAt(off int64) error {
	name := r.File()
	f, err := os.OpenFile(name, os.O_RDONLY|syscall.O_NOFOLLOW|syscall.O_NONBLOCK, 0)
	if err != nil {
		return err
	}
	st, err := f.Stat()
	if err == nil && !st.Mode().IsRegular() {
		err = fmt.Errorf("%w: %s", ErrNotRegular, name)
	}
	if err == nil && off > 0 {
		off, err = f.Seek(off, io.SeekStart)
	}
	if err != nil {
		f.Close()
		return err
	}
	r.f, r.off = f, off
	return nil
}

// File is the path of the file being read.
func (r *Reader) File() string {
	if r.idx == plainIndex {
		return r.base
	}
	return fileName(r.base, r.idx)
}

// Offset is the offset in File after the last byte read.
func (r *Reader) Offset() int64 { return r.off }

// Close closes the file being read.
func (r *Reader) Close() error {
	if r.f == nil {
		return nil
	}
	err := r.f.Close()
	r.f = nil
	return err
}
