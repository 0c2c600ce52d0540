package cni

import (
	"context"
	"encoding/json"
	"fmt"
	"net/netip"
	"slices"
	"strconv"
	"sync"
)

// Method names for Fake's FailNext and Calls.
const (
	MethodSetup    = "Setup"
	MethodRestore  = "Restore"
	MethodTeardown = "Teardown"
	MethodGC       = "GC"
)

var _ Networker = (*Fake)(nil)

// Fake is an in-memory Networker for actor tests: it hands out addresses
// from 10.0.0.0/16, refuses a host port that another allocation maps,
// counts calls, records their order ("Setup alloc1") and fails chosen
// calls. Restore keeps an allocation it knows and sets up one it does not
// (as after a reboot, see Reboot).
type Fake struct {
	mu     sync.Mutex
	next   netip.Addr
	allocs map[string]*Result
	calls  map[string]int
	order  []string
	fail   map[string][]error
}

// NewFake returns an empty Fake.
func NewFake() *Fake {
	return &Fake{next: netip.MustParseAddr("10.0.0.2"), allocs: map[string]*Result{},
		calls: map[string]int{}, fail: map[string][]error{}}
}

// FailNext makes the next times calls of method fail with err.
func (f *Fake) FailNext(method string, err error, times int) {
	f.mu.Lock()
	defer f.mu.Unlock()
	for range times {
		f.fail[method] = append(f.fail[method], err)
	}
}

// Calls is how many times method was called.
func (f *Fake) Calls(method string) int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.calls[method]
}

// Order lists the calls so far as "Method allocID" ("GC" alone).
func (f *Fake) Order() []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	return slices.Clone(f.order)
}

// Active lists the allocations that have a network, sorted.
func (f *Fake) Active() []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	ids := make([]string, 0, len(f.allocs))
	for id := range f.allocs {
		ids = append(ids, id)
	}
	slices.Sort(ids)
	return ids
}

// Reboot forgets every network, as a host reboot does.
func (f *Fake) Reboot() {
	f.mu.Lock()
	defer f.mu.Unlock()
	clear(f.allocs)
}

// begin counts a call and returns the error injected for it, if any.
func (f *Fake) begin(method, allocID string) error {
	f.calls[method]++
	f.order = append(f.order, method+" "+allocID)
	if q := f.fail[method]; len(q) > 0 {
		f.fail[method] = q[1:]
		return q[0]
	}
	return nil
}

// Setup implements Networker.
func (f *Fake) Setup(_ context.Context, req SetupRequest) (*Result, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if err := f.begin(MethodSetup, req.AllocID); err != nil {
		return nil, err
	}
	return f.setup(req)
}

func (f *Fake) setup(req SetupRequest) (*Result, error) {
	req, err := req.normalize()
	if err != nil {
		return nil, err
	}
	if _, ok := f.allocs[req.AllocID]; ok {
		return nil, fmt.Errorf("%w: %s", ErrExists, req.AllocID)
	}
	for id, r := range f.allocs {
		for _, p := range r.Ports {
			for _, q := range req.Ports {
				if p.HostPort == q.HostPort && p.Protocol == q.Protocol {
					return nil, &PortInUseError{Port: q.HostPort, Protocol: q.Protocol,
						By: strconv.Quote(id)}
				}
			}
		}
	}
	ip := f.next
	f.next = f.next.Next()
	raw, _ := json.Marshal(map[string]string{"cniVersion": CNIVersion, "ip": ip.String()})
	res := &Result{NetnsPath: "/var/run/netns/" + req.AllocID, Interface: IfName, IP: ip,
		Prefix: netip.PrefixFrom(ip, 16), Gateway: netip.MustParseAddr("10.0.0.1"),
		Ports: req.Ports, RawResult: raw}
	f.allocs[req.AllocID] = res
	return res, nil
}

// Restore implements Networker.
func (f *Fake) Restore(_ context.Context, allocID string, _ []byte, req SetupRequest) (*Result, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if err := f.begin(MethodRestore, allocID); err != nil {
		return nil, err
	}
	if r, ok := f.allocs[allocID]; ok {
		return r, nil
	}
	req.AllocID = allocID
	r, err := f.setup(req)
	if err != nil {
		return nil, err
	}
	fresh := *r
	fresh.Recreated = true
	return &fresh, nil
}

// Teardown implements Networker.
func (f *Fake) Teardown(_ context.Context, allocID string, _ []byte, _ SetupRequest) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	if err := f.begin(MethodTeardown, allocID); err != nil {
		return err
	}
	delete(f.allocs, allocID)
	return nil
}

// GC implements Networker.
func (f *Fake) GC(_ context.Context, live func(string) bool) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.calls[MethodGC]++
	f.order = append(f.order, MethodGC)
	if q := f.fail[MethodGC]; len(q) > 0 {
		f.fail[MethodGC] = q[1:]
		return q[0]
	}
	for id := range f.allocs {
		if !live(id) {
			delete(f.allocs, id)
		}
	}
	return nil
}
