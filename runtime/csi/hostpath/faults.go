package hostpath

import (
	"context"
	"fmt"
	"path"
	"slices"
	"sync"
	"time"

	csipb "github.com/container-storage-interface/spec/lib/go/csi"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
)

// Call is the record of one RPC the plugin answered.
type Call struct {
	Method   string    `json:"method"` // CSI RPC name, e.g. "NodeUnpublishVolume"
	VolumeID string    `json:"volume_id,omitempty"`
	NodeID   string    `json:"node_id,omitempty"`
	Start    time.Time `json:"start"`
	End      time.Time `json:"end"`
	Code     string    `json:"code"` // gRPC code name, "OK" on success
}

// failRule fails the next times calls of method (for volumeID, or any).
type failRule struct {
	method, volumeID string
	code             codes.Code
	times            int // < 0: forever
}

// faults holds the injected faults and the call records. It is the gRPC
// interceptor that applies them.
type faults struct {
	mu       sync.Mutex
	rules    []*failRule
	latency  map[string]time.Duration // method ("" = every method)
	hangs    map[string]chan struct{} // method + " " + volumeID
	race     bool
	inflight int // controller publish/unpublish calls running
	calls    []Call
	running  map[uint64]Call // calls in flight, by sequence number
	seq      uint64
	maxCalls int
	stopped  chan struct{}
}

func newFaults(maxCalls int) *faults {
	return &faults{
		latency:  map[string]time.Duration{},
		hangs:    map[string]chan struct{}{},
		running:  map[uint64]Call{},
		maxCalls: maxCalls,
		stopped:  make(chan struct{}),
	}
}

// Methods lists the CSI RPC names the plugin can serve, for faults.
func Methods() []string {
	var out []string
	for _, sd := range []grpc.ServiceDesc{csipb.Identity_ServiceDesc, csipb.Controller_ServiceDesc, csipb.Node_ServiceDesc} {
		for _, m := range sd.Methods {
			out = append(out, m.MethodName)
		}
	}
	slices.Sort(out)
	return out
}

func checkMethod(method string) error {
	if !slices.Contains(Methods(), method) {
		return fmt.Errorf("%w %q", ErrUnknownMethod, method)
	}
	return nil
}

// stop releases every hung call and makes later waits end at once.
func (f *faults) stop() {
	f.mu.Lock()
	defer f.mu.Unlock()
	select {
	case <-f.stopped:
	default:
		close(f.stopped)
	}
}

// reopen undoes stop, for a plugin that starts again.
func (f *faults) reopen() {
	f.mu.Lock()
	defer f.mu.Unlock()
	select {
	case <-f.stopped:
		f.stopped = make(chan struct{})
	default:
	}
}

// intercept is the unary server interceptor: it records the call, applies
// race mode, latency, hangs and failures, then runs the handler.
func (f *faults) intercept(ctx context.Context, req any, info *grpc.UnaryServerInfo,
	handler grpc.UnaryHandler) (any, error) {
	call := Call{Method: path.Base(info.FullMethod), VolumeID: volumeIDOf(req), NodeID: nodeIDOf(req), Start: time.Now()}
	seq := f.begin(call)
	resp, err := f.run(ctx, &call, req, handler)
	call.End = time.Now()
	call.Code = status.Code(err).String()
	f.record(seq, call)
	return resp, err
}

func (f *faults) run(ctx context.Context, call *Call, req any, handler grpc.UnaryHandler) (any, error) {
	if raced, done := f.enter(call.Method); raced {
		return nil, status.Errorf(codes.Internal,
			"device name race: another ControllerPublish/Unpublish is in flight (%s %s)", call.Method, call.VolumeID)
	} else if done != nil {
		defer done()
	}
	if err := f.delay(ctx, call.Method, call.VolumeID); err != nil {
		return nil, err
	}
	if code := f.take(call.Method, call.VolumeID); code != codes.OK {
		return nil, status.Errorf(code, "injected fault: %s %s", call.Method, call.VolumeID)
	}
	return handler(ctx, req)
}

// enter counts a controller publish/unpublish in flight; in race mode a
// second concurrent one is refused (raced).
func (f *faults) enter(method string) (raced bool, done func()) {
	if method != "ControllerPublishVolume" && method != "ControllerUnpublishVolume" {
		return false, nil
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.race && f.inflight > 0 {
		return true, nil
	}
	f.inflight++
	return false, func() {
		f.mu.Lock()
		defer f.mu.Unlock()
		f.inflight--
	}
}

// delay applies the method's latency, then any hang, ending early when ctx
// ends or the plugin stops.
func (f *faults) delay(ctx context.Context, method, volumeID string) error {
	f.mu.Lock()
	d, ok := f.latency[method]
	if !ok {
		d = f.latency[""]
	}
	stopped := f.stopped
	f.mu.Unlock()
	if d > 0 {
		timer := time.NewTimer(d)
		defer timer.Stop()
		if err := waitFor(ctx, timer.C, stopped); err != nil {
			return err
		}
	}
	f.mu.Lock()
	hang := f.hangs[method+" "+volumeID]
	if hang == nil {
		hang = f.hangs[method+" "]
	}
	f.mu.Unlock()
	if hang == nil {
		return nil
	}
	return waitFor(ctx, hang, stopped)
}

func waitFor[T any](ctx context.Context, ch <-chan T, stopped <-chan struct{}) error {
	select {
	case <-ch:
		return nil
	case <-ctx.Done():
		return status.FromContextError(ctx.Err()).Err()
	case <-stopped:
		return status.Error(codes.Unavailable, "plugin stopping")
	}
}

// take consumes one matching failure rule and returns its code.
func (f *faults) take(method, volumeID string) codes.Code {
	f.mu.Lock()
	defer f.mu.Unlock()
	for i, r := range f.rules {
		if r.method != method || (r.volumeID != "" && r.volumeID != volumeID) {
			continue
		}
		if r.times > 0 {
			r.times--
			if r.times == 0 {
				f.rules = slices.Delete(f.rules, i, i+1)
			}
		}
		return r.code
	}
	return codes.OK
}

func (f *faults) begin(c Call) uint64 {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.seq++
	f.running[f.seq] = c
	return f.seq
}

func (f *faults) record(seq uint64, c Call) {
	f.mu.Lock()
	defer f.mu.Unlock()
	delete(f.running, seq)
	if len(f.calls) >= f.maxCalls { // drop the older half
		f.calls = slices.Delete(f.calls, 0, len(f.calls)-f.maxCalls/2)
	}
	f.calls = append(f.calls, c)
}

func volumeIDOf(req any) string {
	switch r := req.(type) {
	case *csipb.CreateVolumeRequest:
		return r.GetName()
	case *csipb.CreateSnapshotRequest:
		return r.GetSourceVolumeId()
	case *csipb.DeleteSnapshotRequest:
		return r.GetSnapshotId()
	case interface{ GetVolumeId() string }:
		return r.GetVolumeId()
	}
	return ""
}

func nodeIDOf(req any) string {
	if r, ok := req.(interface{ GetNodeId() string }); ok {
		return r.GetNodeId()
	}
	return ""
}
