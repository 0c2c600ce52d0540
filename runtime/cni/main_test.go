//go:build linux

package cni

import (
	"fmt"
	"os"
	"testing"

	"go.uber.org/goleak"
)

// ipForward is the host's net.ipv4.ip_forward; the bridge plugin turns it
// on, and TestMain puts it back.
const ipForward = "/proc/sys/net/ipv4/ip_forward"

func TestMain(m *testing.M) {
	fwd, fwdErr := os.ReadFile(ipForward)
	chains := sharedChainsNow()
	code := m.Run()
	if fwdErr == nil && os.Geteuid() == 0 {
		_ = os.WriteFile(ipForward, fwd, 0o644)
	}
	if err := removeSharedChains(chains); err != nil {
		fmt.Fprintln(os.Stderr, "removing the shared CNI chains:", err)
		code = 1
	}
	if code == 0 {
		if err := goleak.Find(); err != nil {
			fmt.Fprintln(os.Stderr, err)
			code = 1
		}
	}
	os.Exit(code)
}

// requireRoot skips a test that needs root, or fails it under CI=true.
func requireRoot(t testing.TB) {
	t.Helper()
	if os.Geteuid() == 0 {
		return
	}
	msg := "needs root: creates network namespaces, a bridge and iptables rules"
	if os.Getenv("CI") == "true" {
		t.Fatal(msg)
	}
	t.Skip(msg)
}
