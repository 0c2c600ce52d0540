package logrotate

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
)

// fileName is the file of index n of the log at base.
func fileName(base string, n int) string { return base + "." + strconv.Itoa(n) }

// indexes lists the indexes of base's files, lowest first. A missing
// directory is no file; names that are not base.<digits> are ignored.
func indexes(base string) ([]int, error) {
	entries, err := os.ReadDir(filepath.Dir(base))
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	prefix := filepath.Base(base) + "."
	var out []int
	for _, e := range entries {
		rest, ok := strings.CutPrefix(e.Name(), prefix)
		if !ok || e.IsDir() || !allDigits(rest) {
			continue
		}
		if n, err := strconv.Atoi(rest); err == nil {
			out = append(out, n)
		}
	}
	slices.Sort(out)
	return out, nil
}

func allDigits(s string) bool {
	if s == "" || len(s) > 9 {
		return false
	}
	for _, c := range s {
		if c < '0' || c > '9' {
			return false
		}
	}
	return true
}
