package alloc

import (
	"github.com/troupe-dev/troupe/runtime/clientstate"
)

// Usage is the set of allocations on this host using each staged volume,
// keyed by staging path (plugin, volume and mode). NodeUnstageVolume runs
// only when the last of them lets go. It is a plain value: the client's
// usage actor (UsageActor, csi_usage_actor.go) owns the one Usage of the
// host and is the only one to read or change it.
type Usage struct {
	users map[string]map[string]bool
}

// newUsage returns an empty Usage.
func newUsage() *Usage {
	return &Usage{users: map[string]map[string]bool{}}
}

// NewUsageFromState rebuilds the Usage from the client state file on
// agent start: every stored volume record that staged its volume and has
// not released it yet counts.
func NewUsageFromState(allocs []*clientstate.StoredAlloc) *Usage {
	u := newUsage()
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
	if u.users[key] == nil {
		u.users[key] = map[string]bool{}
	}
	u.users[key][allocID] = true
}

// Release drops allocID from key's users and returns how many others
// remain: with 0 the caller unstages.
func (u *Usage) Release(key, allocID string) int {
	delete(u.users[key], allocID)
	n := len(u.users[key])
	if n == 0 {
		delete(u.users, key)
	}
	return n
}

// Users is how many allocations use the volume staged at key.
func (u *Usage) Users(key string) int { return len(u.users[key]) }
