package device

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"strings"
	"sync"

	"google.golang.org/protobuf/proto"

	"github.com/troupe-dev/troupe/messages"
)

// Method names for Fake.Calls.
const (
	MethodFingerprint = "Fingerprint"
	MethodReserve     = "Reserve"
	MethodStats       = "Stats"
	MethodWatch       = "Watch"
)

// FakeName is a Fake's default plugin name; FakeEnv is the variable its
// reservations set to the comma-separated instance IDs (a Fake named "x"
// sets X_VISIBLE_DEVICES instead).
const (
	FakeName = "fake"
	FakeEnv  = "FAKE_VISIBLE_DEVICES"
)

var (
	_ Plugin  = (*Fake)(nil)
	_ Watcher = (*Fake)(nil)
)

// Fake is an in-memory Plugin for the tests of other packages; make one
// with NewFake. It reports the groups it was given; Reserve returns
// FakeEnv=<ids> and a device node /dev/fake-<id> (rwm) per instance;
// SetHealth changes an instance and wakes every Watch.
//
// Next*Err make the next call of that method fail once. Set them before
// the Fake is shared, or inside Inject afterwards.
type Fake struct {
	NextFingerprintErr error
	NextReserveErr     error
	NextStatsErr       error

	mu       sync.Mutex
	name     string
	groups   []*messages.NodeDeviceResource
	stats    map[string]*InstanceStats
	calls    map[string]int
	reserved [][]string
	watchers map[int]func()
	nextW    int
}

// NewFake returns a Fake named FakeName that reports groups (cloned).
func NewFake(groups ...*messages.NodeDeviceResource) *Fake {
	return &Fake{name: FakeName, groups: cloneGroups(groups)}
}

// FakeGroup returns a group vendor/typ/name of healthy instances with ids,
// for NewFake: device.NewFake(device.FakeGroup("nvidia", "gpu", "T4", "GPU-a", "GPU-b")).
func FakeGroup(vendor, typ, name string, ids ...string) *messages.NodeDeviceResource {
	g := &messages.NodeDeviceResource{Vendor: vendor, Type: typ, Name: name, Attributes: map[string]string{}}
	for _, id := range ids {
		g.Instances = append(g.Instances, &messages.NodeDevice{ID: id, Healthy: true})
	}
	return g
}

// Named sets the plugin name (to hold several Fakes in one Manager) and
// returns f.
func (f *Fake) Named(name string) *Fake {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.name = name
	return f
}

// Inject runs fn with the Fake locked, to set Next*Err while other
// goroutines use it.
func (f *Fake) Inject(fn func(f *Fake)) {
	f.mu.Lock()
	defer f.mu.Unlock()
	fn(f)
}

// Calls is how many times method (a Method* constant) was called.
func (f *Fake) Calls(method string) int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.calls[method]
}

// Reserved returns the ID lists of the successful Reserve calls, in order.
func (f *Fake) Reserved() [][]string {
	f.mu.Lock()
	defer f.mu.Unlock()
	out := make([][]string, len(f.reserved))
	for i, ids := range f.reserved {
		out[i] = slices.Clone(ids)
	}
	return out
}

// SetHealth changes instance id and wakes every Watch; it reports whether
// the Fake has that instance.
func (f *Fake) SetHealth(id string, healthy bool, desc string) bool {
	f.mu.Lock()
	inst := f.instance(id)
	if inst == nil {
		f.mu.Unlock()
		return false
	}
	inst.Healthy, inst.HealthDescription = healthy, desc
	wake := slices.Collect(maps.Values(f.watchers))
	f.mu.Unlock()
	for _, fn := range wake {
		fn()
	}
	return true
}

// SetStats sets what Stats returns.
func (f *Fake) SetStats(stats map[string]*InstanceStats) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.stats = maps.Clone(stats)
}

// Watchers is how many Watch calls are running.
func (f *Fake) Watchers() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return len(f.watchers)
}

// Name returns the plugin name, FakeName unless set by Named.
func (f *Fake) Name() string {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.name
}

// Fingerprint returns clones of the groups.
func (f *Fake) Fingerprint(context.Context) ([]*messages.NodeDeviceResource, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if err := f.record(MethodFingerprint, &f.NextFingerprintErr); err != nil {
		return nil, err
	}
	return cloneGroups(f.groups), nil
}

// Reserve returns FakeEnv and one device node per instance.
func (f *Fake) Reserve(ids []string) (*Reservation, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if err := f.record(MethodReserve, &f.NextReserveErr); err != nil {
		return nil, err
	}
	ids = Dedupe(ids)
	if len(ids) == 0 {
		return nil, ErrNoInstances
	}
	env := strings.ToUpper(f.name) + "_VISIBLE_DEVICES"
	res := &Reservation{Envs: map[string]string{env: strings.Join(ids, ",")}}
	for _, id := range ids {
		if f.instance(id) == nil {
			return nil, fmt.Errorf("%w: %s", ErrUnknownInstance, id)
		}
		path := "/dev/fake-" + id
		res.Devices = append(res.Devices, DeviceNode{HostPath: path, ContainerPath: path, Permissions: "rwm"})
	}
	f.reserved = append(f.reserved, ids)
	return res, nil
}

// Stats returns what SetStats set.
func (f *Fake) Stats(context.Context) (map[string]*InstanceStats, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if err := f.record(MethodStats, &f.NextStatsErr); err != nil {
		return nil, err
	}
	return maps.Clone(f.stats), nil
}

// Watch calls onChange on every SetHealth until ctx is done.
func (f *Fake) Watch(ctx context.Context, onChange func()) error {
	f.mu.Lock()
	_ = f.record(MethodWatch, nil)
	if f.watchers == nil {
		f.watchers = map[int]func(){}
	}
	key := f.nextW
	f.nextW++
	f.watchers[key] = onChange
	f.mu.Unlock()

	<-ctx.Done()
	f.mu.Lock()
	delete(f.watchers, key)
	f.mu.Unlock()
	return nil
}

// record counts a call and returns the injected error, consuming it; the
// caller holds f.mu.
func (f *Fake) record(method string, next *error) error {
	if f.calls == nil {
		f.calls = map[string]int{}
	}
	f.calls[method]++
	if next == nil || *next == nil {
		return nil
	}
	err := *next
	*next = nil
	return err
}

// instance finds id; the caller holds f.mu.
func (f *Fake) instance(id string) *messages.NodeDevice {
	for _, g := range f.groups {
		for _, inst := range g.GetInstances() {
			if inst.GetID() == id {
				return inst
			}
		}
	}
	return nil
}

func cloneGroups(groups []*messages.NodeDeviceResource) []*messages.NodeDeviceResource {
	out := make([]*messages.NodeDeviceResource, len(groups))
	for i, g := range groups {
		out[i] = proto.Clone(g).(*messages.NodeDeviceResource)
	}
	return out
}
