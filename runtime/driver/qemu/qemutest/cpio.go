package qemutest

import (
	"compress/gzip"
	"fmt"
	"io"
	"os"
)

// entry is one file of an archive: a directory (Data nil, Mode with
// os.ModeDir), a regular file or a symlink (Data is its target).
type entry struct {
	Name string
	Mode os.FileMode
	Data []byte
}

// writeNewc writes entries as a gzipped cpio "newc" archive, as the kernel
// unpacks an initramfs.
func writeNewc(w io.Writer, entries []entry) error {
	gz := gzip.NewWriter(w)
	for i, e := range append(entries, entry{Name: "TRAILER!!!"}) {
		mode := uint32(e.Mode.Perm())
		switch {
		case e.Name == "TRAILER!!!":
			mode = 0
		case e.Mode&os.ModeDir != 0:
			mode |= 0o040000
		case e.Mode&os.ModeSymlink != 0:
			mode |= 0o120000
		default:
			mode |= 0o100000
		}
		nlink := 1
		if e.Mode&os.ModeDir != 0 {
			nlink = 2
		}
		hdr := fmt.Sprintf("070701%08x%08x%08x%08x%08x%08x%08x%08x%08x%08x%08x%08x%08x",
			i+1, mode, 0, 0, nlink, 0, len(e.Data), 0, 0, 0, 0, len(e.Name)+1, 0)
		if _, err := io.WriteString(gz, hdr+e.Name+"\x00"); err != nil {
			return err
		}
		if err := pad(gz, len(hdr)+len(e.Name)+1); err != nil {
			return err
		}
		if _, err := gz.Write(e.Data); err != nil {
			return err
		}
		if err := pad(gz, len(e.Data)); err != nil {
			return err
		}
	}
	return gz.Close()
}

// pad writes zeros up to the next multiple of 4 after n bytes.
func pad(w io.Writer, n int) error {
	_, err := w.Write(make([]byte, (4-n%4)%4))
	return err
}
