package state

import (
	"errors"
	"fmt"
	"sort"

	memdb "github.com/hashicorp/go-memdb"
	"google.golang.org/protobuf/proto"

	"github.com/troupe-dev/troupe/messages"
)

// Service registrations (Nomad's native service discovery): one row per
// service instance of a running allocation, keyed by (namespace, ID),
// indexed by allocation and by (namespace, service name). A client
// registers an allocation's services all at once (the ones it no longer
// lists go), and they go when the allocation stops on its client, is lost
// with its node, or is garbage collected.

// TableServices holds the registrations.
const TableServices = "services"

const (
	idxAlloc       = "alloc"
	idxServiceNode = "node"
)

// ErrServiceNotFound answers a delete of a registration that is not stored.
var ErrServiceNotFound = errors.New("state: service registration not found")

// ErrAllocTerminal refuses registrations for an allocation that is not
// running any more (a late one would outlive it).
var ErrAllocTerminal = errors.New("state: allocation is terminal")

func init() { watchedTables = append(watchedTables, TableServices) }

func serviceTable() *memdb.TableSchema {
	reg := func(o any) *messages.ServiceRegistration { return o.(*messages.ServiceRegistration) }
	return table(TableServices,
		index(idxID, true, func(o any) []byte { return key2(reg(o).Namespace, reg(o).ID) }),
		index(idxAlloc, false, func(o any) []byte { return key1(reg(o).AllocID) }),
		index(idxName, false, func(o any) []byte { return key2(reg(o).Namespace, reg(o).ServiceName) }),
		index(idxServiceNode, false, func(o any) []byte { return key1(reg(o).NodeID) }))
}

// Services are every registration, by namespace then ID.
func (s *Snap) Services() []*messages.ServiceRegistration {
	return list[*messages.ServiceRegistration](s.txn, TableServices, idxID)
}

// ServicesByNamespace are the registrations in namespace ns.
func (s *Snap) ServicesByNamespace(ns string) []*messages.ServiceRegistration {
	return list[*messages.ServiceRegistration](s.txn, TableServices, idxID+"_prefix", ns)
}

// ServicesByName are the registrations of service name in namespace ns,
// ordered by ID.
func (s *Snap) ServicesByName(ns, name string) []*messages.ServiceRegistration {
	out := list[*messages.ServiceRegistration](s.txn, TableServices, idxName, ns, name)
	sort.Slice(out, func(i, j int) bool { return out[i].ID < out[j].ID })
	return out
}

// ServicesByAlloc are an allocation's registrations.
func (s *Snap) ServicesByAlloc(allocID string) []*messages.ServiceRegistration {
	return list[*messages.ServiceRegistration](s.txn, TableServices, idxAlloc, allocID)
}

// ServiceByID is one registration, or nil.
func (s *Snap) ServiceByID(ns, id string) *messages.ServiceRegistration {
	return first[*messages.ServiceRegistration](s.txn, TableServices, idxID, ns, id)
}

// applyUpsertServices replaces an allocation's registrations with the
// ones listed (each must name that allocation). An unchanged one keeps its
// indexes, so a client that registers again after a restart changes
// nothing.
func applyUpsertServices(w *writeTxn, c *messages.UpsertServiceRegistrations) any {
	a := w.read().AllocByID(c.GetAllocID())
	if a == nil {
		return fmt.Errorf("%w: %q", ErrAllocNotFound, c.GetAllocID())
	}
	if a.ClientTerminalStatus() {
		return fmt.Errorf("%w: %q is %s", ErrAllocTerminal, a.ID, a.ClientStatus)
	}
	return w.replaceAllocServices(a, c.GetServices())
}

// clientServices takes the registrations a client reported with its
// allocation's status (after the status was stored: a terminal
// allocation registers nothing). A bad set is dropped, with the rest of
// the report kept.
func (w *writeTxn) clientServices(upd, a *messages.Allocation) {
	if upd.GetServiceRegistrations() == nil || a.ClientTerminalStatus() {
		return
	}
	_ = w.replaceAllocServices(a, upd.GetServiceRegistrations().GetRegistrations())
}

// replaceAllocServices makes regs the registrations of a; nothing changes
// when one is malformed.
func (w *writeTxn) replaceAllocServices(a *messages.Allocation, in []*messages.ServiceRegistration) error {
	keep := map[string]bool{}
	regs := make([]*messages.ServiceRegistration, 0, len(in))
	for _, r := range in {
		if r.GetAllocID() != a.ID || r.GetID() == "" || r.GetServiceName() == "" {
			return fmt.Errorf("%w: registration %q must name allocation %q, an ID and a service name", ErrBadCommand, r.GetID(), a.ID)
		}
		// The allocation, not the client, says where it runs.
		r = proto.Clone(r).(*messages.ServiceRegistration)
		r.Namespace, r.NodeID, r.JobID = NamespaceOrDefault(a.Namespace), a.NodeID, a.JobID
		if old := w.read().ServiceByID(r.Namespace, r.ID); old != nil && old.AllocID != a.ID {
			return fmt.Errorf("%w: registration %q belongs to allocation %q", ErrBadCommand, r.ID, old.AllocID)
		}
		keep[r.Namespace+"\x00"+r.ID] = true
		regs = append(regs, r)
	}
	for _, old := range w.read().ServicesByAlloc(a.ID) {
		if !keep[old.Namespace+"\x00"+old.ID] {
			w.delete(TableServices, old)
			w.changed[TableServices] = true
		}
	}
	for _, r := range regs {
		old := w.read().ServiceByID(r.Namespace, r.ID)
		if old != nil && sameRegistration(old, r) {
			continue
		}
		r.CreateIndex, r.ModifyIndex = w.index, w.index
		if old != nil {
			r.CreateIndex = old.CreateIndex
		}
		w.insert(TableServices, r)
		w.changed[TableServices] = true
	}
	return nil
}

func sameRegistration(a, b *messages.ServiceRegistration) bool {
	x, y := proto.Clone(a).(*messages.ServiceRegistration), proto.Clone(b).(*messages.ServiceRegistration)
	x.CreateIndex, x.ModifyIndex, y.CreateIndex, y.ModifyIndex = 0, 0, 0, 0
	return proto.Equal(x, y)
}

// applyDeleteServicesByAlloc removes the allocations' registrations.
func applyDeleteServicesByAlloc(w *writeTxn, c *messages.DeleteServiceRegistrationsByAlloc) any {
	for _, id := range c.GetAllocIDs() {
		w.dropAllocServices(id)
	}
	return nil
}

// applyDeleteServiceByID removes one registration.
func applyDeleteServiceByID(w *writeTxn, c *messages.DeleteServiceRegistrationByID) any {
	r := w.read().ServiceByID(NamespaceOrDefault(c.GetNamespace()), c.GetID())
	if r == nil {
		return fmt.Errorf("%w: %q", ErrServiceNotFound, c.GetID())
	}
	w.delete(TableServices, r)
	w.changed[TableServices] = true
	return nil
}

// dropAllocServices removes an allocation's registrations (it stopped,
// was lost or collected).
func (w *writeTxn) dropAllocServices(allocID string) {
	for _, r := range w.read().ServicesByAlloc(allocID) {
		w.delete(TableServices, r)
		w.changed[TableServices] = true
	}
}

// dropNodeServices removes the registrations of a node's allocations (it
// is down: Nomad removes them then, before its allocations are lost).
func (w *writeTxn) dropNodeServices(nodeID string) {
	for _, r := range list[*messages.ServiceRegistration](w.txn, TableServices, idxServiceNode, nodeID) {
		w.delete(TableServices, r)
		w.changed[TableServices] = true
	}
}

func (w *writeTxn) restoreServices(rs []*messages.ServiceRegistration) {
	for _, r := range rs {
		w.insert(TableServices, r)
	}
}

func eachService(txn *memdb.Txn, cw *chunkWriter) error {
	return each(txn, TableServices, cw, func(r *messages.Snapshot, s *messages.ServiceRegistration) {
		r.ServiceRegistrations = append(r.ServiceRegistrations, s)
	})
}

// applyServiceCommand applies the service registration commands; ok is
// false for any other command.
func (f *FSM) applyServiceCommand(index uint64, cmd *messages.Command) (any, bool) {
	switch c := cmd.Cmd.(type) {
	case *messages.Command_UpsertServiceRegistrations:
		return f.run(index, cmd.Time, func(w *writeTxn) any { return applyUpsertServices(w, c.UpsertServiceRegistrations) }), true
	case *messages.Command_DeleteServiceRegistrationsByAlloc:
		return f.run(index, cmd.Time, func(w *writeTxn) any {
			return applyDeleteServicesByAlloc(w, c.DeleteServiceRegistrationsByAlloc)
		}), true
	case *messages.Command_DeleteServiceRegistrationByID:
		return f.run(index, cmd.Time, func(w *writeTxn) any { return applyDeleteServiceByID(w, c.DeleteServiceRegistrationByID) }), true
	}
	return nil, false
}
