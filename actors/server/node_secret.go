package server

import (
	"github.com/troupe-dev/troupe/messages"
)

// Node secrets: a client proves it speaks for its node with the SecretID
// it generated on its first start and registered with the node (Nomad's
// Node.SecretID). The servers keep it in raft with the node, never show
// it, and check it on every request a client makes for its node.

// errSecretMismatch is the refusal of a request whose node secret is not
// the registered node's (Nomad's words).
func errSecretMismatch(nodeID string) *messages.Error {
	return messages.Errorf(messages.CodePermissionDenied, "node secret ID does not match for node %q", nodeID)
}

// nodeSecretDenied says why a request made for node nodeID with secret is
// refused, nil when the node is registered with that secret. One lookup
// and a string comparison: it runs on every heartbeat.
func nodeSecretDenied(view StateView, nodeID, secret string) *messages.Error {
	n := view.NodeByID(nodeID)
	if n == nil {
		return messages.Errorf(messages.CodeNotFound, "node %q is not registered", nodeID)
	}
	if n.GetSecretID() != secret {
		return errSecretMismatch(nodeID)
	}
	return nil
}

// registerDenied refuses a registration that would take over a node
// registered with another secret. A node stored without one (registered
// before secrets existed) takes the secret its client now sends.
func registerDenied(view StateView, n *messages.Node) *messages.Error {
	old := view.NodeByID(n.GetID())
	if old == nil || old.GetSecretID() == "" || old.GetSecretID() == n.GetSecretID() {
		return nil
	}
	return errSecretMismatch(n.GetID())
}

// allocUpdatesDenied refuses a client's allocation updates unless the
// node's secret matches and every known allocation they name is placed
// on that node: a client reports only its own allocations.
func allocUpdatesDenied(view StateView, m *messages.UpdateAllocsRequest) *messages.Error {
	if e := nodeSecretDenied(view, m.GetNodeID(), m.GetNodeSecretID()); e != nil {
		return e
	}
	for _, up := range m.GetAllocs() {
		if old := view.AllocByID(up.GetID()); old != nil && old.GetNodeID() != m.GetNodeID() {
			return messages.Errorf(messages.CodePermissionDenied,
				"allocation %q is not placed on node %q", up.GetID(), m.GetNodeID())
		}
	}
	return nil
}
