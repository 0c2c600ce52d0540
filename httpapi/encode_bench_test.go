package httpapi

import (
	"encoding/json"
	"fmt"
	"testing"

	"github.com/troupe-dev/troupe/actors/scheduler"
	"github.com/troupe-dev/troupe/messages"
)

// benchNodes is a node list response of 1,000 fingerprinted nodes.
func benchNodes() []*messages.Node { return scheduler.SimulatedNodes(1000, 1) }

// BenchmarkMarshalResponse1kNodes: our response encoder against
// encoding/json on the same 1,000 nodes (the figure is in the issue note).
func BenchmarkMarshalResponse1kNodes(b *testing.B) {
	nodes := benchNodes()
	for _, enc := range []struct {
		name string
		fn   func(any) ([]byte, error)
	}{{"troupe", marshalResponse}, {"encoding_json", json.Marshal}} {
		b.Run(enc.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				raw, err := enc.fn(nodes)
				if err != nil || len(raw) == 0 {
					b.Fatal(fmt.Errorf("marshal: %w (%d bytes)", err, len(raw)))
				}
			}
		})
	}
}
