//go:build linux

package cni

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// BenchmarkSetupTeardown measures one Setup (with one port) and one
// Teardown; it reports each as setup-ms/op and teardown-ms/op.
func BenchmarkSetupTeardown(b *testing.B) {
	tn := newTestNet(b)
	ctx := testCtx(b)
	port := mustFreePort(b)
	var setup, teardown time.Duration
	for b.Loop() {
		req := SetupRequest{AllocID: newID(), Ports: []PortMapping{{HostPort: port, ContainerPort: 80}}}
		start := time.Now()
		res, err := tn.Setup(ctx, req)
		setup += time.Since(start)
		require.NoError(b, err)
		start = time.Now()
		require.NoError(b, tn.Teardown(ctx, req.AllocID, res.RawResult, req))
		teardown += time.Since(start)
	}
	b.ReportMetric(float64(setup.Milliseconds())/float64(b.N), "setup-ms/op")
	b.ReportMetric(float64(teardown.Milliseconds())/float64(b.N), "teardown-ms/op")
}
