package device

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"slices"
	"strings"
	"sync"
	"time"

	"google.golang.org/protobuf/proto"

	"github.com/troupe-dev/troupe/messages"
)

// ManagerName is the Manager's plugin name.
const ManagerName = "devices"

var (
	_ Plugin  = (*Manager)(nil)
	_ Watcher = (*Manager)(nil)
)

// Manager holds the host's device plugins and is itself a Plugin over all
// of them: Fingerprint merges their groups, Reserve routes each instance
// ID to the plugin that reported it, Stats and Watch cover them all.
//
// One plugin's failure does not hide the others: a plugin whose
// Fingerprint fails keeps its last known instances, reported unhealthy
// with the error, and the failure is logged when it changes.
type Manager struct {
	logger  *slog.Logger
	plugins []Plugin

	mu      sync.Mutex
	owners  map[string]Plugin                         // instance ID → plugin, from the last Fingerprint
	groups  []*messages.NodeDeviceResource            // the last Fingerprint's answer
	last    map[string][]*messages.NodeDeviceResource // plugin name → its last good fingerprint
	lastErr map[string]string                         // plugin name → the failure logged last

	watching sync.WaitGroup // Watch calls under way; Close waits for them
	// closed (under mu) is set by Close: a Watch that starts after it
	// returns at once, so no Add races Close's Wait.
	closed bool
}

// NewManager returns a Manager over plugins, which must have distinct,
// non-empty names. A nil logger discards logs.
func NewManager(logger *slog.Logger, plugins ...Plugin) (*Manager, error) {
	if logger == nil {
		logger = slog.New(slog.DiscardHandler)
	}
	names := map[string]bool{}
	for i, p := range plugins {
		if p == nil || p.Name() == "" {
			return nil, fmt.Errorf("%w: plugin %d is nil or has no name", ErrInvalidPlugin, i)
		}
		if names[p.Name()] {
			return nil, fmt.Errorf("%w: %q", ErrDuplicatePlugin, p.Name())
		}
		names[p.Name()] = true
	}
	return &Manager{
		logger:  logger,
		plugins: slices.Clone(plugins),
		owners:  map[string]Plugin{},
		last:    map[string][]*messages.NodeDeviceResource{},
		lastErr: map[string]string{},
	}, nil
}

// Name returns ManagerName.
func (m *Manager) Name() string { return ManagerName }

// Fingerprint fingerprints every plugin and returns their groups sorted
// by GroupID; groups with the same GroupID from two plugins become one.
// An instance ID reported by two plugins stays with the first. It fails
// only when ctx is done.
func (m *Manager) Fingerprint(ctx context.Context) ([]*messages.NodeDeviceResource, error) {
	var all []*messages.NodeDeviceResource
	byID := map[string]*messages.NodeDeviceResource{}
	owners := map[string]Plugin{}
	for _, p := range m.plugins {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		groups, err := p.Fingerprint(ctx)
		if err != nil {
			if ctxErr := ctx.Err(); ctxErr != nil {
				return nil, ctxErr
			}
			groups = m.failed(p, err)
		} else {
			m.succeeded(p, groups)
		}
		for _, g := range groups {
			g = m.claim(p, proto.Clone(g).(*messages.NodeDeviceResource), owners)
			if prev, ok := byID[GroupID(g)]; ok {
				prev.Instances = append(prev.Instances, g.Instances...)
				continue
			}
			byID[GroupID(g)] = g
			all = append(all, g)
		}
	}
	slices.SortStableFunc(all, func(a, b *messages.NodeDeviceResource) int {
		return strings.Compare(GroupID(a), GroupID(b))
	})
	m.mu.Lock()
	m.owners = owners
	m.groups = all
	m.mu.Unlock()
	return cloneGroups(all), nil
}

// Groups returns what the last Fingerprint returned (nothing before the
// first), without asking the plugins.
func (m *Manager) Groups() []*messages.NodeDeviceResource {
	m.mu.Lock()
	defer m.mu.Unlock()
	return cloneGroups(m.groups)
}

// claim records p as the owner of g's instances and drops those that
// another plugin owns already.
func (m *Manager) claim(p Plugin, g *messages.NodeDeviceResource, owners map[string]Plugin) *messages.NodeDeviceResource {
	kept := g.Instances[:0]
	for _, inst := range g.Instances {
		if other, ok := owners[inst.GetID()]; ok {
			m.logger.Warn("device: instance reported by two plugins, keeping the first",
				"id", inst.GetID(), "first", other.Name(), "second", p.Name())
			continue
		}
		owners[inst.GetID()] = p
		kept = append(kept, inst)
	}
	g.Instances = kept
	return g
}

// succeeded remembers p's fingerprint and logs its recovery.
func (m *Manager) succeeded(p Plugin, groups []*messages.NodeDeviceResource) {
	clones := make([]*messages.NodeDeviceResource, len(groups))
	for i, g := range groups {
		clones[i] = proto.Clone(g).(*messages.NodeDeviceResource)
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	m.last[p.Name()] = clones
	if _, failing := m.lastErr[p.Name()]; failing {
		delete(m.lastErr, p.Name())
		m.logger.Info("device: plugin fingerprints again", "plugin", p.Name())
	}
}

// failed logs p's failure when it is new and returns p's last known
// groups with every instance unhealthy.
func (m *Manager) failed(p Plugin, err error) []*messages.NodeDeviceResource {
	desc := "fingerprint failed: " + err.Error()
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.lastErr[p.Name()] != desc {
		m.lastErr[p.Name()] = desc
		m.logger.Warn("device: plugin fingerprint failed", "plugin", p.Name(), "err", err)
	}
	var out []*messages.NodeDeviceResource
	for _, g := range m.last[p.Name()] {
		g = proto.Clone(g).(*messages.NodeDeviceResource)
		for _, inst := range g.Instances {
			inst.Healthy = false
			inst.HealthDescription = desc
		}
		out = append(out, g)
	}
	return out
}

// Reserve asks each plugin for its share of ids and merges the results.
// IDs it does not know from the last Fingerprint (none yet, after an agent
// restart) make it fingerprint once before it gives up with
// ErrUnknownInstance.
func (m *Manager) Reserve(ids []string) (*Reservation, error) {
	ids = Dedupe(ids)
	if len(ids) == 0 {
		return nil, ErrNoInstances
	}
	byPlugin, unknown := m.route(ids)
	if len(unknown) > 0 {
		if _, err := m.Fingerprint(context.Background()); err != nil {
			return nil, err
		}
		byPlugin, unknown = m.route(ids)
	}
	if len(unknown) > 0 {
		return nil, fmt.Errorf("%w: %s", ErrUnknownInstance, strings.Join(unknown, ", "))
	}
	res := &Reservation{Envs: map[string]string{}}
	for _, p := range m.plugins {
		pids := byPlugin[p.Name()]
		if len(pids) == 0 {
			continue
		}
		r, err := p.Reserve(pids)
		if err != nil {
			return nil, fmt.Errorf("device: plugin %s: %w", p.Name(), err)
		}
		if err := res.merge(r); err != nil {
			return nil, err
		}
	}
	return res, nil
}

// route splits ids by owning plugin name.
func (m *Manager) route(ids []string) (byPlugin map[string][]string, unknown []string) {
	m.mu.Lock()
	defer m.mu.Unlock()
	byPlugin = map[string][]string{}
	for _, id := range ids {
		p, ok := m.owners[id]
		if !ok {
			unknown = append(unknown, id)
			continue
		}
		byPlugin[p.Name()] = append(byPlugin[p.Name()], id)
	}
	return byPlugin, unknown
}

// Stats merges every plugin's stats. A failing plugin is logged (at debug
// level) and left out; Stats fails only when ctx is done.
func (m *Manager) Stats(ctx context.Context) (map[string]*InstanceStats, error) {
	out := map[string]*InstanceStats{}
	for _, p := range m.plugins {
		stats, err := p.Stats(ctx)
		if ctxErr := ctx.Err(); ctxErr != nil {
			return nil, ctxErr
		}
		if err != nil {
			m.logger.Debug("device: plugin stats failed", "plugin", p.Name(), "err", err)
			continue
		}
		for id, s := range stats {
			if _, dup := out[id]; !dup {
				out[id] = s
			}
		}
	}
	return out, nil
}

// Watch runs Watch of every plugin that is a Watcher, each in its own
// goroutine, and returns nil once ctx is done and they have all returned
// (at once when none can watch). onChange may be called from several
// goroutines. Plugins that cannot watch are skipped (they log why); other
// watch failures are logged.
func (m *Manager) Watch(ctx context.Context, onChange func()) error {
	m.mu.Lock()
	if m.closed {
		m.mu.Unlock()
		return nil
	}
	m.watching.Add(1)
	m.mu.Unlock()
	defer m.watching.Done()
	var wg sync.WaitGroup
	for _, p := range m.plugins {
		w, ok := p.(Watcher)
		if !ok {
			continue
		}
		wg.Go(func() {
			err := w.Watch(ctx, onChange)
			if err != nil && !errors.Is(err, ErrWatchUnsupported) && ctx.Err() == nil {
				m.logger.Warn("device: plugin health watch stopped", "plugin", p.Name(), "err", err)
			}
		})
	}
	wg.Wait()
	return nil
}

// closeWait bounds how long Close waits for cancelled watches to return
// (a plugin's event wait has its own short timeout).
const closeWait = 5 * time.Second

// Close closes every plugin that is an io.Closer. Cancel Watch's context
// first: Close waits (at most closeWait) for running watches to return,
// so no plugin is closed under one.
func (m *Manager) Close() error {
	m.mu.Lock()
	m.closed = true
	m.mu.Unlock()
	done := make(chan struct{})
	go func() {
		m.watching.Wait()
		close(done)
	}()
	select {
	case <-done:
	case <-time.After(closeWait):
		m.logger.Warn("device: closing plugins while a health watch still runs")
	}
	var errs []error
	for _, p := range m.plugins {
		if c, ok := p.(io.Closer); ok {
			if err := c.Close(); err != nil {
				errs = append(errs, fmt.Errorf("device: close %s: %w", p.Name(), err))
			}
		}
	}
	return errors.Join(errs...)
}
