package state

import (
	"github.com/troupe-dev/troupe/messages"
)

// The ACL topics (Nomad's names). Their events carry the stored token or
// policy; the HTTP layer shows a token without its secret, as Nomad does.
const (
	TopicACLToken  = "ACLToken"
	TopicACLPolicy = "ACLPolicy"
)

// aclCommand adds the events of an ACL write, with Nomad's types. As in
// Nomad, a bootstrap emits none; a collection of expired tokens is their
// deletion.
func (c *EventCollector) aclCommand(cmd *messages.Command) bool {
	switch m := cmd.Cmd.(type) {
	case *messages.Command_UpsertACLPolicies:
		c.typ = "ACLPolicyUpserted"
		for _, p := range m.UpsertACLPolicies.Policies {
			c.aclPolicy(p.GetName())
		}
	case *messages.Command_DeleteACLPolicies:
		c.typ = "ACLPolicyDeleted"
		for _, name := range m.DeleteACLPolicies.Names {
			c.aclPolicy(name)
		}
	case *messages.Command_UpsertACLTokens:
		c.typ = "ACLTokenUpserted"
		for _, t := range m.UpsertACLTokens.Tokens {
			c.aclToken(t.GetAccessorID())
		}
	case *messages.Command_DeleteACLTokens:
		c.typ = "ACLTokenDeleted"
		for _, id := range m.DeleteACLTokens.AccessorIDs {
			c.aclToken(id)
		}
	case *messages.Command_ExpireACLTokens:
		c.typ = "ACLTokenDeleted"
		c.expiredTokens()
	case *messages.Command_BootstrapACL:
	default:
		return false
	}
	return true
}

// aclPolicy adds a policy's event: as stored, or as it was before a
// delete (only its name when the state before is unknown).
func (c *EventCollector) aclPolicy(name string) {
	p := c.snap.ACLPolicyByName(name)
	if p == nil && c.prev != nil {
		p = c.prev.ACLPolicyByName(name)
	}
	if p == nil {
		p = &messages.ACLPolicy{Name: name}
	}
	c.Add(TopicACLPolicy, name, "", nil, p, false)
}

func (c *EventCollector) aclToken(id string) {
	t := c.snap.ACLTokenByAccessor(id)
	if t == nil && c.prev != nil {
		t = c.prev.ACLTokenByAccessor(id)
	}
	if t == nil {
		t = &messages.ACLToken{AccessorID: id}
	}
	c.Add(TopicACLToken, id, "", nil, t, false)
}

// expiredTokens adds the tokens an expiry removed (known only from the
// state before it).
func (c *EventCollector) expiredTokens() {
	if c.prev == nil {
		return
	}
	for _, t := range c.prev.ACLTokens() {
		if c.snap.ACLTokenByAccessor(t.AccessorID) == nil {
			c.Add(TopicACLToken, t.AccessorID, "", nil, t, false)
		}
	}
}
