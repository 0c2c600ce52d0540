package csi

import (
	"context"
	"fmt"
	"slices"
	"sync"
)

// Method names for Fake.Calls, Fake.FailNext and Fake.Order: the names of
// the Client methods.
const (
	MethodPluginInfo             = "PluginInfo"
	MethodProbe                  = "Probe"
	MethodPluginCapabilities     = "PluginCapabilities"
	MethodControllerCapabilities = "ControllerCapabilities"
	MethodNodeInfo               = "NodeInfo"
	MethodNodeCapabilities       = "NodeCapabilities"
	MethodControllerPublish      = "ControllerPublish"
	MethodControllerUnpublish    = "ControllerUnpublish"
	MethodCreateVolume           = "CreateVolume"
	MethodDeleteVolume           = "DeleteVolume"
	MethodControllerExpand       = "ControllerExpand"
	MethodCreateSnapshot         = "CreateSnapshot"
	MethodDeleteSnapshot         = "DeleteSnapshot"
	MethodNodeStage              = "NodeStage"
	MethodNodeUnstage            = "NodeUnstage"
	MethodNodePublish            = "NodePublish"
	MethodNodeUnpublish          = "NodeUnpublish"
)

// Methods lists every Method* name.
var Methods = []string{
	MethodPluginInfo, MethodProbe, MethodPluginCapabilities, MethodControllerCapabilities,
	MethodNodeInfo, MethodNodeCapabilities, MethodControllerPublish, MethodControllerUnpublish,
	MethodCreateVolume, MethodDeleteVolume, MethodControllerExpand, MethodCreateSnapshot,
	MethodDeleteSnapshot, MethodNodeStage, MethodNodeUnstage, MethodNodePublish, MethodNodeUnpublish,
}

// fakeFault fails calls of method (for volumeID, or any when empty).
type fakeFault struct {
	method, volumeID string
	err              error
	times            int // < 0: forever
}

// fakeSpan is one call; start and end are positions on a logical clock.
type fakeSpan struct {
	method     string
	start, end int64 // end 0: still running
}

// recorder is the Fake's bookkeeping: counts, order, spans, faults and
// blocked methods. Its methods lock mu themselves.
type recorder struct {
	mu      sync.Mutex
	clock   int64
	calls   map[string]int
	order   []string
	spans   []*fakeSpan
	faults  []*fakeFault
	blocked map[string]chan struct{} // method+" "+volumeID
}

func mustKnow(method string) {
	if !slices.Contains(Methods, method) {
		panic(fmt.Sprintf("csi: Fake: unknown method %q", method))
	}
}

// begin records the start of a call, waits while the call is blocked, and
// returns the injected error, if any, and a func that records the end.
func (r *recorder) begin(ctx context.Context, method, volumeID string) (func(), error) {
	r.mu.Lock()
	if r.calls == nil {
		r.calls = map[string]int{}
	}
	r.calls[method]++
	r.clock++
	span := &fakeSpan{method: method, start: r.clock}
	r.spans = append(r.spans, span)
	r.order = append(r.order, orderEntry(method, volumeID))
	wait := r.blockedChan(method, volumeID)
	r.mu.Unlock()
	end := func() {
		r.mu.Lock()
		defer r.mu.Unlock()
		r.clock++
		span.end = r.clock
	}
	if wait != nil {
		select {
		case <-wait:
		case <-ctx.Done():
			return end, fmt.Errorf("csi: Fake: %s %s: %w", method, volumeID, ctx.Err())
		}
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	return end, r.takeFault(method, volumeID)
}

func orderEntry(method, volumeID string) string {
	if volumeID == "" {
		return method
	}
	return method + " " + volumeID
}

// blockedChan is the channel a call waits on, or nil; r.mu is held.
func (r *recorder) blockedChan(method, volumeID string) chan struct{} {
	if ch, ok := r.blocked[method+" "+volumeID]; ok {
		return ch
	}
	return r.blocked[method+" "]
}

// takeFault consumes one matching fault; r.mu is held.
func (r *recorder) takeFault(method, volumeID string) error {
	for i, f := range r.faults {
		if f.method != method || (f.volumeID != "" && f.volumeID != volumeID) {
			continue
		}
		if f.times > 0 {
			f.times--
			if f.times == 0 {
				r.faults = slices.Delete(r.faults, i, i+1)
			}
		}
		return f.err
	}
	return nil
}

// maxOverlap is the most spans of the given methods running at once.
func (r *recorder) maxOverlap(methods []string) int {
	r.mu.Lock()
	defer r.mu.Unlock()
	type edge struct {
		at    int64
		delta int
	}
	var edges []edge
	for _, s := range r.spans {
		if len(methods) > 0 && !slices.Contains(methods, s.method) {
			continue
		}
		end := s.end
		if end == 0 {
			end = r.clock + 1
		}
		edges = append(edges, edge{s.start, 1}, edge{end, -1})
	}
	slices.SortFunc(edges, func(a, b edge) int { return int(a.at - b.at) })
	cur, most := 0, 0
	for _, e := range edges {
		cur += e.delta
		most = max(most, cur)
	}
	return most
}
