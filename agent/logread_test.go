package agent

import (
	"io"

	"github.com/troupe-dev/troupe/runtime/logrotate"
)

// readLog reads a task's log whole: its rotated files (base.0, base.1,
// ...) or the one file at base; "" when there is none yet.
func readLog(base string) string {
	r, err := logrotate.Open(base, false, 0)
	if err != nil {
		return ""
	}
	defer r.Close()
	b, _ := io.ReadAll(r)
	return string(b)
}
