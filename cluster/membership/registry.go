package membership

import (
	"fmt"
	"net"
	"sync"
	"time"

	"github.com/hashicorp/memberlist"
)

// registry is this node's view of every member, including those that left
// or failed (until reapAfter has passed). memberlist forgets dead members
// and does not say whether one left or failed, so the registry keeps both.
type registry struct {
	mu        sync.Mutex
	members   map[string]*entry
	now       func() time.Time
	reapAfter time.Duration
	// gen counts the changes of members; serverList holds the alive
	// servers as of serversGen; reapAt is when the earliest gone member
	// may be forgotten (zero: none is gone). See servers.go.
	gen, serversGen uint64
	serversOK       bool
	serverList      []Member
	reapAt          time.Time
}

func newRegistry(now func() time.Time, reapAfter time.Duration) *registry {
	return &registry{members: map[string]*entry{}, now: now, reapAfter: reapAfter}
}

// alive records a member that memberlist reports alive (joined or updated)
// and returns the event to publish.
func (r *registry) alive(n *memberlist.Node, typ EventType) (Event, error) {
	meta, leaving, err := decodeMeta(n.Meta)
	if err != nil {
		return Event{}, fmt.Errorf("node %s: %w", n.Name, err)
	}
	status := StatusAlive
	if leaving {
		status = StatusLeaving
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	e, ok := r.members[n.Name]
	if !ok {
		e = &entry{name: n.Name}
		r.members[n.Name] = e
	}
	if e.status != status {
		e.since = r.now()
	}
	e.addr = append(net.IP(nil), n.Addr...)
	e.port, e.status, e.meta = n.Port, status, meta
	r.changedLocked()
	return Event{Type: typ, Member: e.member()}, nil
}

// gone records that memberlist declared a member dead: left if it had
// announced that it was leaving, failed otherwise.
func (r *registry) gone(name string) (Event, bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	e, ok := r.members[name]
	if !ok || !e.live() {
		return Event{}, false
	}
	typ, status := EventFailed, StatusFailed
	if e.status == StatusLeaving {
		typ, status = EventLeave, StatusLeft
	}
	e.status = status
	e.since = r.now()
	r.changedLocked()
	r.goneLocked(e)
	return Event{Type: typ, Member: e.member()}, true
}

// get returns one member.
func (r *registry) get(name string) (Member, bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	e, ok := r.members[name]
	if !ok {
		return Member{}, false
	}
	return e.member(), true
}

// list returns the members that match keep, sorted by name, after
// forgetting those gone for longer than reapAfter.
func (r *registry) list(keep func(*entry) bool) []Member {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.reapLocked()
	out := make([]Member, 0, len(r.members))
	for _, e := range r.members {
		if keep == nil || keep(e) {
			out = append(out, e.member())
		}
	}
	sortMembers(out)
	return out
}

// conflict says why a live peer named name with node ID id cannot be
// admitted: a live member holds the name with another ID, or the ID under
// another name. Left and failed members may be replaced.
func (r *registry) conflict(name, id string) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, e := range r.members {
		if !e.live() {
			continue
		}
		if e.name == name && e.meta.NodeID != id {
			return fmt.Errorf("%w: node %s has ID %s, but live member %s at %s has ID %s",
				ErrDuplicateName, name, id, e.name, e.member().GossipAddr(), e.meta.NodeID)
		}
		if e.name != name && e.meta.NodeID == id {
			return fmt.Errorf("%w: node %s has ID %s, already used by live member %s",
				ErrDuplicateID, name, id, e.name)
		}
	}
	return nil
}
