package clustertest

import (
	"fmt"
	"os"
	"os/exec"
	"runtime"
	"strconv"
	"testing"
)

// tools are the commands the harness runs, with the Debian package of each.
var tools = []struct{ name, pkg string }{
	{"ip", "iproute2"},
	{"nsenter", "util-linux"},
	{"unshare", "util-linux"},
}

// probe is what RequireRoot looks at; tests replace it.
type probe struct {
	goos     string
	euid     int
	getenv   func(string) string
	lookPath func(string) (string, error)
}

func realProbe() probe {
	return probe{goos: runtime.GOOS, euid: os.Geteuid(), getenv: os.Getenv, lookPath: exec.LookPath}
}

// RequireRoot skips the test unless the harness can run here: Linux, root,
// and ip, nsenter and unshare on PATH. Under CI=true it fails instead of
// skipping, because CI runs as root and a silent skip there hides a defect.
func RequireRoot(t testing.TB) {
	t.Helper()
	requireRoot(t, realProbe())
}

func requireRoot(t testing.TB, p probe) {
	t.Helper()
	why := p.unmet()
	if why == "" {
		return
	}
	if ci, _ := strconv.ParseBool(p.getenv("CI")); ci {
		t.Fatalf("clustertest: %s (CI=true, so this is a failure, not a skip)", why)
		return
	}
	t.Skipf("clustertest: %s; skipping multi-host test", why)
}

// unmet says why the harness cannot run, or "" when it can.
func (p probe) unmet() string {
	if p.goos != "linux" {
		return "network namespaces need Linux, this is " + p.goos
	}
	if p.euid != 0 {
		return fmt.Sprintf("needs root to create network namespaces (euid %d)", p.euid)
	}
	for _, tool := range tools {
		if _, err := p.lookPath(tool.name); err != nil {
			return fmt.Sprintf("%s not found on PATH (Debian package %s)", tool.name, tool.pkg)
		}
	}
	return ""
}
