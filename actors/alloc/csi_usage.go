package alloc

import (
	"sync"

	"github.com/troupe-dev/troupe/runtime/clientstate"
)

// Usage is the set of allocations on this host using each staged volume,
// keyed by staging path (plugin, volume and mode). NodeUnstageVolume runs
// only when the last of them lets go. One Usage is shared by every alloc
// actor of the client; it is safe for concurrent use.
//
// Lock serialises the node-side calls on one staged volume across the
// allocations of this host, as CSI asks of a container orchestrator: a
// stopping allocation's Release + NodeUnstage never interleaves with a
// starting one's Acquire + NodeStage + NodePublish.
type Usage struct {
	mu    sync.Mutex
	users map[string]map[string]bool
	locks map[string]*sync.Mutex
}

// NewUsage returns an empty Usage.
func NewUsage() *Usage {
	return &Usage{users: map[string]map[string]bool{}, locks: map[string]*sync.Mutex{}}
}

// Lock takes the node-side lock of the volume staged at key and returns
// its unlock. Workers hold it across plugin calls, never an actor.
func (u *Usage) Lock(key string) (unlock func()) {
	u.mu.Lock()
	l := u.locks[key]
	if l == nil {
		l = &sync.Mutex{}
		u.locks[key] = l
	}
	u.mu.Unlock()
	l.Lock()
	return l.Unlock
}

// NewUsageFromState rebuilds the Usage from the client state file on
// agent start: every stored volume record that staged its volume and has
// not released it yet counts.
func NewUsageFromState(allocs []*clientstate.StoredAlloc) *Usage {
	u := NewUsage()
	for _, sa := range allocs {
		for _, m := range sa.Volumes {
			if m.Staged && m.StagingPath != "" && volumeActive(m.State.GetState()) {
				u.Acquire(m.StagingPath, sa.Alloc.GetID())
			}
		}
	}
	return u
}

// Acquire records that allocID uses the volume staged at key (again is a
// no-op).
func (u *Usage) Acquire(key, allocID string) {
	u.mu.Lock()
	defer u.mu.Unlock()
	if u.users[key] == nil {
		u.users[key] = map[string]bool{}
	}
	u.users[key][allocID] = true
}

// Release drops allocID from key's users and returns how many others
// remain: with 0 the caller unstages.
func (u *Usage) Release(key, allocID string) int {
	u.mu.Lock()
	defer u.mu.Unlock()
	delete(u.users[key], allocID)
	n := len(u.users[key])
	if n == 0 {
		delete(u.users, key)
	}
	return n
}

// Users is how many allocations use the volume staged at key.
func (u *Usage) Users(key string) int {
	u.mu.Lock()
	defer u.mu.Unlock()
	return len(u.users[key])
}
