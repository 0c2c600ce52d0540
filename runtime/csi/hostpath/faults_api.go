package hostpath

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"google.golang.org/grpc/codes"
)

// FailNext makes the next times calls of method (a CSI RPC name such as
// "NodeUnpublishVolume", see Methods) answer code; times < 0 fails every
// call until ResetFaults. Rules are matched in the order they were added.
func (p *Plugin) FailNext(method string, code codes.Code, times int) error {
	return p.FailNextVolume(method, "", code, times)
}

// FailNextVolume is FailNext for the calls about one volume only (the
// volume ID, the name for CreateVolume, the source volume for
// CreateSnapshot, the snapshot ID for DeleteSnapshot).
func (p *Plugin) FailNextVolume(method, volumeID string, code codes.Code, times int) error {
	if err := checkMethod(method); err != nil {
		return err
	}
	if code == codes.OK || code > codes.Unauthenticated {
		return fmt.Errorf("%w: code %s", ErrInvalidFault, code)
	}
	if times == 0 {
		return fmt.Errorf("%w: times is 0", ErrInvalidFault)
	}
	f := p.faults
	f.mu.Lock()
	defer f.mu.Unlock()
	f.rules = append(f.rules, &failRule{method: method, volumeID: volumeID, code: code, times: times})
	return nil
}

// SetLatency delays every call of method by d before it runs; method ""
// sets the latency of every method without its own. d = 0 removes it.
func (p *Plugin) SetLatency(method string, d time.Duration) error {
	if method != "" {
		if err := checkMethod(method); err != nil {
			return err
		}
	}
	if d < 0 {
		return fmt.Errorf("%w: negative latency %s", ErrInvalidFault, d)
	}
	f := p.faults
	f.mu.Lock()
	defer f.mu.Unlock()
	if d == 0 {
		delete(f.latency, method)
	} else {
		f.latency[method] = d
	}
	return nil
}

// Hang makes calls of method for volumeID (any volume when empty) block
// until Release, the caller's deadline, or Stop.
func (p *Plugin) Hang(method, volumeID string) error {
	if err := checkMethod(method); err != nil {
		return err
	}
	f := p.faults
	f.mu.Lock()
	defer f.mu.Unlock()
	if _, ok := f.hangs[method+" "+volumeID]; !ok {
		f.hangs[method+" "+volumeID] = make(chan struct{})
	}
	return nil
}

// Release lets the calls that Hang blocks go on, and later ones through.
func (p *Plugin) Release(method, volumeID string) {
	f := p.faults
	f.mu.Lock()
	defer f.mu.Unlock()
	if ch, ok := f.hangs[method+" "+volumeID]; ok {
		close(ch)
		delete(f.hangs, method+" "+volumeID)
	}
}

// SetRaceMode turns "device name race" mode on or off: while on, a
// ControllerPublishVolume or ControllerUnpublishVolume that arrives while
// another one runs fails with Internal, as concurrent EBS attaches do.
func (p *Plugin) SetRaceMode(on bool) {
	p.faults.mu.Lock()
	defer p.faults.mu.Unlock()
	p.faults.race = on
}

// ResetFaults drops every failure rule and latency, releases every hang
// and turns race mode off. Call records stay.
func (p *Plugin) ResetFaults() {
	f := p.faults
	f.mu.Lock()
	defer f.mu.Unlock()
	f.rules, f.race = nil, false
	clear(f.latency)
	for k, ch := range f.hangs {
		close(ch)
		delete(f.hangs, k)
	}
}

// Calls returns the records of the calls answered so far, oldest first
// (at most Config.MaxCalls; the oldest are dropped first).
func (p *Plugin) Calls() []Call {
	p.faults.mu.Lock()
	defer p.faults.mu.Unlock()
	return slices.Clone(p.faults.calls)
}

// InFlight returns the calls that started and have not ended (End and
// Code unset), oldest first: hung calls, calls in their latency, calls
// running.
func (p *Plugin) InFlight() []Call {
	p.faults.mu.Lock()
	defer p.faults.mu.Unlock()
	out := make([]Call, 0, len(p.faults.running))
	for _, c := range p.faults.running {
		out = append(out, c)
	}
	slices.SortFunc(out, func(a, b Call) int { return a.Start.Compare(b.Start) })
	return out
}

// ParseCode reads a gRPC code by name ("Internal", "INTERNAL",
// "internal", "deadline_exceeded", "CANCELLED") or number.
func ParseCode(s string) (codes.Code, error) {
	if n, err := strconv.Atoi(s); err == nil && n >= 0 && n <= int(codes.Unauthenticated) {
		return codes.Code(n), nil
	}
	want := strings.ReplaceAll(strings.ToLower(s), "_", "")
	if want == "cancelled" {
		want = "canceled"
	}
	for c := codes.OK; c <= codes.Unauthenticated; c++ {
		if strings.ToLower(c.String()) == want {
			return c, nil
		}
	}
	return codes.OK, fmt.Errorf("%w: unknown gRPC code %q", ErrInvalidFault, s)
}
