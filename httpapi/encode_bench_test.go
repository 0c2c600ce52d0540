package httpapi

import (
	"encoding/json"
	"io"
	"testing"

	"github.com/troupe-dev/troupe/actors/scheduler"
	"github.com/troupe-dev/troupe/messages"
)

// benchNodes is a node list response of 1,000 fingerprinted nodes.
func benchNodes() []*messages.Node { return scheduler.SimulatedNodes(1000, 1) }

// BenchmarkMarshalResponse1kNodes: our response writer against
// encoding/json's Encoder on the same 1,000 nodes (the figure is in the
// issue note).
func BenchmarkMarshalResponse1kNodes(b *testing.B) {
	nodes := benchNodes()
	for _, enc := range []struct {
		name string
		fn   func(any) error
	}{
		{"troupe", func(v any) error { return writeJSON(io.Discard, v, false) }},
		{"encoding_json", func(v any) error { return json.NewEncoder(io.Discard).Encode(v) }},
	} {
		b.Run(enc.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if err := enc.fn(nodes); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
