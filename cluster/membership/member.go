package membership

import (
	"net"
	"slices"
	"strconv"
	"strings"
	"time"
)

// Member statuses. memberlist does not expose its "suspect" state, so a
// suspected member stays alive here until it is declared failed.
const (
	StatusAlive   = "alive"
	StatusLeaving = "leaving" // alive, but has announced that it is leaving
	StatusLeft    = "left"
	StatusFailed  = "failed"
)

// Member is one agent as this node sees it.
type Member struct {
	Name   string // memberlist node name (Meta.NodeName)
	Addr   string // gossip IP
	Port   uint16 // gossip port
	Status string // StatusAlive, StatusLeaving, StatusLeft or StatusFailed
	Meta   Meta
	// Tags is Meta flattened for the HTTP API: role, region, dc, id, name,
	// rpc_addr, http_addr, build and, for servers, voter and bootstrap_expect.
	Tags map[string]string
}

// GossipAddr is the member's gossip address as host:port, usable in Join.
func (m Member) GossipAddr() string {
	return net.JoinHostPort(m.Addr, strconv.Itoa(int(m.Port)))
}

// IsServer reports whether the member is a server.
func (m Member) IsServer() bool { return m.Meta.Role == RoleServer }

// EventType says what happened to a member.
type EventType int

// Event types.
const (
	EventJoin   EventType = iota // a member became alive (including this node at start)
	EventLeave                   // a member left gracefully
	EventUpdate                  // a member's metadata changed (or it started leaving)
	EventFailed                  // a member stopped answering probes
)

var eventTypeNames = [...]string{"join", "leave", "update", "failed"}

func (t EventType) String() string {
	if t < 0 || int(t) >= len(eventTypeNames) {
		return "unknown"
	}
	return eventTypeNames[t]
}

// Event is a change to one member; Member is its state after the change.
type Event struct {
	Type   EventType
	Member Member
}

// entry is the registry's record of one member.
type entry struct {
	name   string
	addr   net.IP
	port   uint16
	status string
	meta   Meta
	since  time.Time // last status change
}

func (e *entry) member() Member {
	return Member{
		Name: e.name, Addr: e.addr.String(), Port: e.port,
		Status: e.status, Meta: e.meta, Tags: e.meta.Tags(),
	}
}

// live reports whether the member still holds its name and ID.
func (e *entry) live() bool {
	return e.status == StatusAlive || e.status == StatusLeaving
}

func sortMembers(ms []Member) {
	slices.SortFunc(ms, func(a, b Member) int { return strings.Compare(a.Name, b.Name) })
}
