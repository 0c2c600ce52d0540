package membership

import (
	"slices"
	"time"
)

// The leader answers every client heartbeat with the servers' addresses,
// so Servers must not walk every member (clients gossip too: a cluster of
// 10,000 clients has 10,000 members). The registry counts its changes
// (gen) and keeps the alive servers of the last count; and it walks the
// members to reap only once the earliest gone member is due.

// servers returns the alive servers, sorted by name: the kept list while
// nothing changed since it was made.
func (r *registry) servers() []Member {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.reapLocked()
	if !r.serversOK || r.serversGen != r.gen {
		r.serverList = r.serverList[:0]
		for _, e := range r.members {
			if e.status == StatusAlive && e.meta.Role == RoleServer {
				r.serverList = append(r.serverList, e.member())
			}
		}
		sortMembers(r.serverList)
		r.serversGen, r.serversOK = r.gen, true
	}
	return slices.Clone(r.serverList) // the Members' Tags are shared: read only
}

// changedLocked records a change of the members (r.mu held).
func (r *registry) changedLocked() { r.gen++ }

// goneLocked notes that e stopped being live at e.since, for the reaper.
func (r *registry) goneLocked(e *entry) {
	if r.reapAfter <= 0 {
		return
	}
	if at := e.since.Add(r.reapAfter); r.reapAt.IsZero() || at.Before(r.reapAt) {
		r.reapAt = at
	}
}

// reapLocked forgets the members gone for longer than reapAfter. It walks
// the members only once the earliest of them is due.
func (r *registry) reapLocked() {
	if r.reapAfter <= 0 || r.reapAt.IsZero() {
		return
	}
	now := r.now()
	if !now.After(r.reapAt) {
		return
	}
	r.reapAt = time.Time{}
	for name, e := range r.members {
		if e.live() {
			continue
		}
		if now.Sub(e.since) > r.reapAfter {
			delete(r.members, name)
			r.changedLocked()
			continue
		}
		r.goneLocked(e)
	}
}
