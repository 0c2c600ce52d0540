package httpapi

import (
	"encoding/json"
	"fmt"
	"io"
	"testing"

	"github.com/troupe-dev/troupe/actors/scheduler"
	"github.com/troupe-dev/troupe/api"
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

// BenchmarkMarshalResponse10kAllocs: the answer to GET
// /v1/job/:id/allocations for a job of 10,000 running allocations (the
// UI's job page reads it whole, after a first page of
// /v1/allocations?filter=).
func BenchmarkMarshalResponse10kAllocs(b *testing.B) {
	stubs := make([]*api.AllocListStub, 10000)
	for i := range stubs {
		stubs[i] = api.NewAllocListStub(&messages.Allocation{ID: fmt.Sprintf("%08x-0000-4000-8000-%012x", i, i),
			Namespace: "default", JobID: "web", NodeID: "n1", NodeName: "n1", TaskGroup: "g", Name: fmt.Sprintf("web.g[%d]", i),
			DesiredStatus: "run", ClientStatus: "running", CreateIndex: uint64(i + 10),
			TaskStates: map[string]*messages.TaskState{"t": {State: "running"}}})
	}
	b.ReportAllocs()
	var n int
	for b.Loop() {
		w := &countingWriter{}
		if err := writeJSON(w, stubs, false); err != nil {
			b.Fatal(err)
		}
		n = w.n
	}
	b.ReportMetric(float64(n)/1024, "KB/op")
}

type countingWriter struct{ n int }

func (w *countingWriter) Write(p []byte) (int, error) { w.n += len(p); return len(p), nil }
