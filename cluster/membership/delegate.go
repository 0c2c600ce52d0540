package membership

import (
	"fmt"

	"github.com/hashicorp/memberlist"
)

// delegate is the Membership seen by memberlist: it serves the local
// metadata, admits or refuses peers, and turns memberlist's callbacks into
// registry updates and events. memberlist calls it with its own locks held,
// so no method calls back into memberlist or blocks.
type delegate Membership

var (
	_ memberlist.Delegate         = (*delegate)(nil)
	_ memberlist.EventDelegate    = (*delegate)(nil)
	_ memberlist.AliveDelegate    = (*delegate)(nil)
	_ memberlist.MergeDelegate    = (*delegate)(nil)
	_ memberlist.ConflictDelegate = (*delegate)(nil)
)

// NodeMeta returns the encoded local metadata (size checked when set).
func (d *delegate) NodeMeta(int) []byte {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.metaBytes
}

// NotifyMsg, GetBroadcasts, LocalState and MergeRemoteState: troupe sends
// no user messages over gossip; the actor transport carries everything.
func (d *delegate) NotifyMsg([]byte)                  {}
func (d *delegate) GetBroadcasts(_, _ int) [][]byte   { return nil }
func (d *delegate) LocalState(bool) []byte            { return nil }
func (d *delegate) MergeRemoteState(_ []byte, _ bool) {}

// NotifyAlive admits or refuses every alive message, so that a refused node
// cannot slip in by gossip after its push/pull join was refused.
func (d *delegate) NotifyAlive(n *memberlist.Node) error {
	if err := d.admit(n, true); err != nil {
		d.log.Warn("membership: refused member", "node", n.Name, "addr", n.Address(), "err", err)
		return err
	}
	return nil
}

// NotifyMerge admits or refuses a push/pull join as a whole: on the
// joining node it checks the cluster's members, on a member it checks the
// joiner's state.
func (d *delegate) NotifyMerge(peers []*memberlist.Node) error {
	for _, n := range peers {
		live := n.State == memberlist.StateAlive || n.State == memberlist.StateSuspect
		if err := d.admit(n, live); err != nil {
			d.log.Warn("membership: refused join", "node", n.Name, "addr", n.Address(), "err", err)
			return err
		}
	}
	return nil
}

// admit checks a peer's metadata: readable, valid, same region (in the
// WAN pool: a server of any region) and, when
// the peer is live, no clash of name or node ID with a live member.
func (d *delegate) admit(n *memberlist.Node, live bool) error {
	meta, _, err := decodeMeta(n.Meta)
	if err != nil {
		return fmt.Errorf("node %s has unreadable metadata: %w", n.Name, err)
	}
	if d.cfg.WAN && meta.Role != RoleServer {
		return fmt.Errorf("%w: node %s is a %s, the WAN pool is servers only", ErrNotServer, n.Name, meta.Role)
	}
	if !d.cfg.WAN && meta.Region != d.region {
		return fmt.Errorf("%w: node %s is in region %s, this cluster is %s", ErrWrongRegion, n.Name, meta.Region, d.region)
	}
	if err := meta.Validate(); err != nil {
		return fmt.Errorf("node %s: %w", n.Name, err)
	}
	if !live {
		return nil
	}
	return d.reg.conflict(n.Name, meta.NodeID)
}

// NotifyConflict logs memberlist's own name conflict (same name, another
// address, while the holder is alive); memberlist keeps the holder.
func (d *delegate) NotifyConflict(existing, other *memberlist.Node) {
	d.log.Warn("membership: node name claimed by another address",
		"node", existing.Name, "holder", existing.Address(), "claimant", other.Address())
}

// NotifyJoin records a member that became alive.
func (d *delegate) NotifyJoin(n *memberlist.Node) { d.recordAlive(n, EventJoin) }

// NotifyUpdate records a member's new metadata.
func (d *delegate) NotifyUpdate(n *memberlist.Node) { d.recordAlive(n, EventUpdate) }

// NotifyLeave records a member that memberlist declared dead.
func (d *delegate) NotifyLeave(n *memberlist.Node) {
	ev, ok := d.reg.gone(n.Name)
	if !ok {
		return
	}
	d.log.Info("membership: member "+ev.Type.String(), "node", n.Name, "addr", n.Address())
	d.events.push(ev)
}

func (d *delegate) recordAlive(n *memberlist.Node, typ EventType) {
	ev, err := d.reg.alive(n, typ)
	if err != nil {
		d.log.Warn("membership: ignored member with unreadable metadata", "err", err)
		return
	}
	if typ == EventJoin {
		d.log.Info("membership: member joined", "node", n.Name, "addr", n.Address(), "role", ev.Member.Meta.Role)
	}
	d.events.push(ev)
}
