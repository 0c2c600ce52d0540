package state

import (
	"fmt"

	"github.com/troupe-dev/troupe/messages"
)

// applyUpsertNamespaces creates or replaces namespaces
// (CheckUpsertNamespaces first: one bad namespace stores none). A
// replaced namespace keeps its CreateIndex.
func applyUpsertNamespaces(w *writeTxn, c *messages.UpsertNamespaces) any {
	if err := CheckUpsertNamespaces(c.GetNamespaces()); err != nil {
		return err
	}
	for _, ns := range c.GetNamespaces() {
		ns.CreateIndex = w.index
		if old := w.read().NamespaceByName(ns.Name); old != nil {
			ns.CreateIndex = old.CreateIndex
		}
		ns.ModifyIndex = w.index
		w.insert(TableNamespaces, ns)
	}
	w.changed[TableNamespaces] = true
	return nil
}

// applyDeleteNamespaces deletes namespaces that CheckDeleteNamespaces lets
// go: all of them, or none.
func applyDeleteNamespaces(w *writeTxn, c *messages.DeleteNamespaces) any {
	if err := CheckDeleteNamespaces(w.read(), c.GetNames()); err != nil {
		return err
	}
	for _, name := range c.GetNames() {
		if ns := w.read().NamespaceByName(name); ns != nil {
			w.delete(TableNamespaces, ns)
		}
	}
	w.changed[TableNamespaces] = true
	return nil
}

// restoreNamespaces inserts a snapshot's namespaces (over the built-in one
// a fresh store starts with).
func (w *writeTxn) restoreNamespaces(nss []*messages.Namespace) {
	for _, ns := range nss {
		w.insert(TableNamespaces, ns)
	}
}

// inNamespace refuses a job, volume or variable (what: `job "web"`) whose
// namespace does not exist at this index, so that a registration cannot
// slip in behind a delete of its namespace ("" is "default").
func (w *writeTxn) inNamespace(ns, what string) error {
	ns = NamespaceOrDefault(ns)
	if w.read().NamespaceByName(ns) == nil {
		return fmt.Errorf("%w: namespace %q does not exist: %s cannot be in it", ErrNamespaceNotFound, ns, what)
	}
	return nil
}
