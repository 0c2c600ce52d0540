//go:build !linux

package safepath

import (
	"os"
	"path/filepath"
)

// openNoFollow opens name in the directory d, refusing a symlink there
// (checked, then opened: not atomic off Linux, where troupe's clients do
// not run).
func openNoFollow(d *os.File, name string, flag int, perm os.FileMode) (*os.File, error) {
	p := filepath.Join(d.Name(), name)
	if fi, err := os.Lstat(p); err == nil && fi.Mode()&os.ModeSymlink != 0 {
		return nil, ErrSymlink
	}
	return os.OpenFile(p, flag, perm)
}
