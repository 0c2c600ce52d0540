package csi

import (
	"context"
	"maps"
	"slices"
)

var _ Client = (*Fake)(nil)

// Fake is an in-memory Client for actor tests. It counts calls per method
// (Calls), records their order as "Method volumeID" (Order), and can fail
// or block chosen calls (FailNext, FailNextFor, Block). It keeps the state
// that the calls build (ControllerPublished, Staged, NodePublished) and is
// idempotent like a well-behaved plugin: unpublishing or deleting what is
// not there succeeds.
//
// The exported fields are what the identity and capability calls report;
// set them before the Fake is shared. NewFake fills them with a monolith
// plugin that has every capability troupe uses.
type Fake struct {
	Name, Version  string
	NotReady       bool // Probe reports not ready
	PluginCaps     PluginCaps
	ControllerCaps ControllerCaps
	NodeCaps       NodeCaps
	Node           NodeInfo
	// PublishContext is what ControllerPublish returns.
	PublishContext map[string]string

	rec recorder
	// state, guarded by rec.mu
	volumes   map[string]*Volume
	snapshots map[string]*Snapshot
	attached  map[string]map[string]bool // volume -> node
	staged    map[string]string          // volume -> staging path
	targets   map[string]string          // target path -> volume
}

// NewFake returns a Fake for a healthy monolith plugin on node "node-1".
func NewFake() *Fake {
	return &Fake{
		Name:           "fake.csi.troupe.dev",
		Version:        "1.0.0",
		PluginCaps:     PluginCaps{ControllerService: true, OnlineExpansion: true},
		ControllerCaps: ControllerCaps{CreateDelete: true, PublishUnpublish: true, Snapshots: true, Expand: true},
		NodeCaps:       NodeCaps{StageUnstage: true},
		Node:           NodeInfo{NodeID: "node-1"},
		PublishContext: map[string]string{"device": "/dev/fake"},
	}
}

// FailNext makes the next times calls of method (a Method* name) fail with
// err; times < 0 fails every call until Reset. It panics on an unknown
// method, so that a typo cannot pass silently.
func (f *Fake) FailNext(method string, err error, times int) {
	f.FailNextFor(method, "", err, times)
}

// FailNextFor is FailNext for the calls about one volume only.
func (f *Fake) FailNextFor(method, volumeID string, err error, times int) {
	mustKnow(method)
	f.rec.mu.Lock()
	defer f.rec.mu.Unlock()
	f.rec.faults = append(f.rec.faults, &fakeFault{method: method, volumeID: volumeID, err: err, times: times})
}

// Block makes calls of method for volumeID (any volume when empty) wait
// until release is called or their context ends; a blocked call counts as
// in flight for MaxInFlight. Calling release twice is safe.
func (f *Fake) Block(method, volumeID string) (release func()) {
	mustKnow(method)
	f.rec.mu.Lock()
	defer f.rec.mu.Unlock()
	if f.rec.blocked == nil {
		f.rec.blocked = map[string]chan struct{}{}
	}
	key := method + " " + volumeID
	ch := make(chan struct{})
	f.rec.blocked[key] = ch
	return func() {
		f.rec.mu.Lock()
		defer f.rec.mu.Unlock()
		if f.rec.blocked[key] == ch {
			delete(f.rec.blocked, key)
			close(ch)
		}
	}
}

// Reset drops every pending fault (blocked calls stay blocked).
func (f *Fake) Reset() {
	f.rec.mu.Lock()
	defer f.rec.mu.Unlock()
	f.rec.faults = nil
}

// Calls is how many times method was called, failed calls included.
func (f *Fake) Calls(method string) int {
	f.rec.mu.Lock()
	defer f.rec.mu.Unlock()
	return f.rec.calls[method]
}

// Order is every call so far, in order, as "Method volumeID" ("Method"
// for calls without a volume).
func (f *Fake) Order() []string {
	f.rec.mu.Lock()
	defer f.rec.mu.Unlock()
	return slices.Clone(f.rec.order)
}

// MaxInFlight is the most calls of the given methods (all when none) that
// ran at the same time.
func (f *Fake) MaxInFlight(methods ...string) int { return f.rec.maxOverlap(methods) }

// ControllerPublished reports whether volumeID is published to nodeID.
func (f *Fake) ControllerPublished(volumeID, nodeID string) bool {
	f.rec.mu.Lock()
	defer f.rec.mu.Unlock()
	return f.attached[volumeID][nodeID]
}

// Staged reports whether volumeID is staged.
func (f *Fake) Staged(volumeID string) bool {
	f.rec.mu.Lock()
	defer f.rec.mu.Unlock()
	_, ok := f.staged[volumeID]
	return ok
}

// NodePublished reports whether a volume is published at targetPath.
func (f *Fake) NodePublished(targetPath string) bool {
	f.rec.mu.Lock()
	defer f.rec.mu.Unlock()
	_, ok := f.targets[targetPath]
	return ok
}

// HasVolume reports whether CreateVolume made volumeID and DeleteVolume
// has not removed it.
func (f *Fake) HasVolume(volumeID string) bool {
	f.rec.mu.Lock()
	defer f.rec.mu.Unlock()
	_, ok := f.volumes[volumeID]
	return ok
}

// do records a call, applies blocks and faults, and on success runs fn
// with the state locked.
func (f *Fake) do(ctx context.Context, method, volumeID string, fn func() error) error {
	end, err := f.rec.begin(ctx, method, volumeID)
	defer end()
	if err != nil {
		return err
	}
	f.rec.mu.Lock()
	defer f.rec.mu.Unlock()
	f.initState()
	if fn == nil {
		return nil
	}
	return fn()
}

func (f *Fake) initState() {
	if f.volumes == nil {
		f.volumes = map[string]*Volume{}
		f.snapshots = map[string]*Snapshot{}
		f.attached = map[string]map[string]bool{}
		f.staged = map[string]string{}
		f.targets = map[string]string{}
	}
}

// Close implements Client; a Fake stays usable after Close.
func (f *Fake) Close() error { return nil }

// PluginInfo implements Client.
func (f *Fake) PluginInfo(ctx context.Context) (string, string, error) {
	err := f.do(ctx, MethodPluginInfo, "", nil)
	if err != nil {
		return "", "", err
	}
	return f.Name, f.Version, nil
}

// Probe implements Client.
func (f *Fake) Probe(ctx context.Context) (bool, error) {
	if err := f.do(ctx, MethodProbe, "", nil); err != nil {
		return false, err
	}
	return !f.NotReady, nil
}

// PluginCapabilities implements Client.
func (f *Fake) PluginCapabilities(ctx context.Context) (PluginCaps, error) {
	if err := f.do(ctx, MethodPluginCapabilities, "", nil); err != nil {
		return PluginCaps{}, err
	}
	return f.PluginCaps, nil
}

// ControllerCapabilities implements Client.
func (f *Fake) ControllerCapabilities(ctx context.Context) (ControllerCaps, error) {
	if err := f.do(ctx, MethodControllerCapabilities, "", nil); err != nil {
		return ControllerCaps{}, err
	}
	return f.ControllerCaps, nil
}

// NodeCapabilities implements Client.
func (f *Fake) NodeCapabilities(ctx context.Context) (NodeCaps, error) {
	if err := f.do(ctx, MethodNodeCapabilities, "", nil); err != nil {
		return NodeCaps{}, err
	}
	return f.NodeCaps, nil
}

// NodeInfo implements Client.
func (f *Fake) NodeInfo(ctx context.Context) (NodeInfo, error) {
	if err := f.do(ctx, MethodNodeInfo, "", nil); err != nil {
		return NodeInfo{}, err
	}
	info := f.Node
	info.Topology = maps.Clone(info.Topology)
	return info, nil
}

// checkCapability validates like the gRPC client does.
func checkCapability(rpc string, c *VolumeCapability) error {
	_, err := requiredCapability(rpc, c)
	return err
}
