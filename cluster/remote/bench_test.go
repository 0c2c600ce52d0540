package remote

import (
	"context"
	"testing"

	"github.com/troupe-dev/troupe/messages"
)

// BenchmarkRequestRoundTrip is one typed Request from this process to the
// peer process over loopback gRPC and its reply.
func BenchmarkRequestRoundTrip(b *testing.B) {
	ctx := context.Background()
	root := fx.a.Root()
	req := &messages.NodeHeartbeat{NodeID: "n1"}
	for b.Loop() {
		r, err := Request[*messages.NodeHeartbeatResponse](ctx, root, fx.b, "server", req)
		if err != nil || r.GetHeartbeatTTL() == 0 {
			b.Fatalf("reply %v, error %v", r, err)
		}
	}
}
