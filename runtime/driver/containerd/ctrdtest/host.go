package ctrdtest

import (
	"os"
	"os/exec"
	"strings"
	"testing"
)

// RequireHost skips tb unless it runs as root and containerd, runc and
// the extra tools (names on PATH or absolute paths) are there; with
// CI=true it fails instead of skipping.
func RequireHost(tb testing.TB, extra ...string) {
	tb.Helper()
	var missing []string
	if os.Geteuid() != 0 {
		missing = append(missing, "root")
	}
	missing = append(missing, missingTools(append([]string{"containerd", "runc"}, extra...))...)
	skipOrFail(tb, missing)
}

// RequireTools skips tb unless every tool (a name on PATH or an absolute
// path) is there; with CI=true it fails instead of skipping.
func RequireTools(tb testing.TB, tools ...string) {
	tb.Helper()
	skipOrFail(tb, missingTools(tools))
}

func missingTools(tools []string) []string {
	var missing []string
	for _, tool := range tools {
		if _, err := exec.LookPath(tool); err != nil {
			missing = append(missing, tool)
		}
	}
	return missing
}

func skipOrFail(tb testing.TB, missing []string) {
	tb.Helper()
	if len(missing) == 0 {
		return
	}
	msg := "test needs " + strings.Join(missing, ", ")
	if os.Getenv("CI") == "true" {
		tb.Fatal(msg)
	}
	tb.Skip(msg + "; skipping (CI=true makes this a failure)")
}
