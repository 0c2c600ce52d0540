package safepath

import (
	"errors"
	"os"
	"path/filepath"
	"syscall"
)

// openNoFollow opens name in the directory d without following a symlink
// at name (openat(2) with O_NOFOLLOW: a link is ELOOP).
func openNoFollow(d *os.File, name string, flag int, perm os.FileMode) (*os.File, error) {
	fd, err := syscall.Openat(int(d.Fd()), name, flag|syscall.O_NOFOLLOW|syscall.O_CLOEXEC, uint32(perm.Perm()))
	if errors.Is(err, syscall.ELOOP) {
		return nil, ErrSymlink
	}
	if err != nil {
		return nil, err
	}
	return os.NewFile(uintptr(fd), filepath.Join(d.Name(), name)), nil
}
