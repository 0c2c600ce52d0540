package node

import (
	"maps"
	"slices"
	"sync/atomic"

	"google.golang.org/protobuf/proto"

	"github.com/troupe-dev/troupe/messages"
)

// PluginTable is the CSI plugin instances running on this node, by the
// plugin task that serves them, with their sockets. Its one owner, the
// client actor, writes it from its probes' reports; alloc actors' workers
// (node publish and unpublish) and controller requests read it. A write
// never changes what a reader holds: each one builds a new immutable
// snapshot and swaps it in atomically, so a reader sees one whole table,
// without a lock, while the client writes the next.
type PluginTable struct {
	snap atomic.Pointer[pluginSnapshot]
}

// pluginSnapshot is one version of the table; it never changes once
// published.
type pluginSnapshot struct {
	entries map[string]pluginEntry // by allocID/task
	keys    []string               // sorted: the lowest allocID/task wins
}

type pluginEntry struct {
	socket           string
	controller, node *messages.CSIInfo
}

// NewPluginTable returns an empty table.
func NewPluginTable() *PluginTable {
	t := &PluginTable{}
	t.snap.Store(&pluginSnapshot{entries: map[string]pluginEntry{}})
	return t
}

// set and remove are the owner's writes (the client actor's goroutine
// only): each publishes a new snapshot.
func (t *PluginTable) set(key, socket string, controller, node *messages.CSIInfo) {
	t.replace(func(m map[string]pluginEntry) {
		m[key] = pluginEntry{socket: socket, controller: cloneInfo(controller), node: cloneInfo(node)}
	})
}

func (t *PluginTable) remove(key string) {
	t.replace(func(m map[string]pluginEntry) { delete(m, key) })
}

func (t *PluginTable) replace(change func(map[string]pluginEntry)) {
	entries := maps.Clone(t.snap.Load().entries)
	change(entries)
	t.snap.Store(&pluginSnapshot{entries: entries, keys: slices.Sorted(maps.Keys(entries))})
}

// cloneInfo copies an instance into a snapshot: what the caller holds may
// change after.
func cloneInfo(in *messages.CSIInfo) *messages.CSIInfo {
	if in == nil {
		return nil
	}
	return proto.Clone(in).(*messages.CSIInfo)
}

// Node returns the socket and the instance of a healthy node plugin of
// pluginID on this node (the lowest allocID/task when there are several).
func (t *PluginTable) Node(pluginID string) (socket string, info *messages.CSIInfo, ok bool) {
	return t.find(pluginID, func(e pluginEntry) *messages.CSIInfo { return e.node })
}

// Controller returns the socket and the instance of a healthy controller
// plugin of pluginID on this node.
func (t *PluginTable) Controller(pluginID string) (socket string, info *messages.CSIInfo, ok bool) {
	return t.find(pluginID, func(e pluginEntry) *messages.CSIInfo { return e.controller })
}

func (t *PluginTable) find(pluginID string, pick func(pluginEntry) *messages.CSIInfo) (string, *messages.CSIInfo, bool) {
	s := t.snap.Load()
	for _, k := range s.keys {
		e := s.entries[k]
		if in := pick(e); in != nil && in.GetPluginID() == pluginID && in.GetHealthy() {
			return e.socket, proto.Clone(in).(*messages.CSIInfo), true
		}
	}
	return "", nil, false
}
