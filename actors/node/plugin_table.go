package node

import (
	"sort"
	"sync"

	"google.golang.org/protobuf/proto"

	"github.com/troupe-dev/troupe/messages"
)

// PluginTable is the CSI plugin instances running on this node, by the
// plugin task that serves them, with their sockets. The client actor
// writes it from its probes' reports; alloc actors (node unpublish and
// publish) and controller requests read it from other goroutines.
type PluginTable struct {
	mu      sync.RWMutex
	entries map[string]pluginEntry // by allocID/task
}

type pluginEntry struct {
	socket           string
	controller, node *messages.CSIInfo
}

// NewPluginTable returns an empty table.
func NewPluginTable() *PluginTable { return &PluginTable{entries: map[string]pluginEntry{}} }

func (t *PluginTable) set(key, socket string, controller, node *messages.CSIInfo) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.entries[key] = pluginEntry{socket: socket, controller: controller, node: node}
}

func (t *PluginTable) remove(key string) {
	t.mu.Lock()
	defer t.mu.Unlock()
	delete(t.entries, key)
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
	t.mu.RLock()
	defer t.mu.RUnlock()
	keys := make([]string, 0, len(t.entries))
	for k := range t.entries {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		e := t.entries[k]
		if in := pick(e); in != nil && in.GetPluginID() == pluginID && in.GetHealthy() {
			return e.socket, proto.Clone(in).(*messages.CSIInfo), true
		}
	}
	return "", nil, false
}
