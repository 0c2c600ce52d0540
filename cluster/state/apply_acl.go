package state

import (
	"fmt"

	"github.com/troupe-dev/troupe/acl"
	"github.com/troupe-dev/troupe/messages"
)

// CheckACLPolicy refuses a policy with a bad name or rules that do not
// parse (naming what is wrong).
func CheckACLPolicy(p *messages.ACLPolicy) error {
	if !validPolicyName.MatchString(p.GetName()) {
		return fmt.Errorf("%w: policy name %q must be 1-128 letters, digits and dashes", ErrBadACL, p.GetName())
	}
	if _, err := acl.Parse(p.GetRules()); err != nil {
		return fmt.Errorf("%w: policy %q: %w", ErrBadACL, p.GetName(), err)
	}
	return nil
}

// CheckACLToken refuses a token whose type, policies or hash are wrong.
// Its policies must exist in s.
func CheckACLToken(s *Snap, t *messages.ACLToken) error {
	if t.GetAccessorID() == "" || len(t.GetSecretHash()) == 0 {
		return fmt.Errorf("%w: token needs an accessor ID and a secret", ErrBadACL)
	}
	switch t.GetType() {
	case ACLTokenClient:
		if len(t.GetPolicies()) == 0 {
			return fmt.Errorf("%w: client token %q needs at least one policy", ErrBadACL, t.GetAccessorID())
		}
	case ACLTokenManagement:
		if len(t.GetPolicies()) != 0 {
			return fmt.Errorf("%w: management token %q cannot have policies", ErrBadACL, t.GetAccessorID())
		}
	default:
		return fmt.Errorf("%w: token type %q must be %q or %q", ErrBadACL, t.GetType(), ACLTokenClient, ACLTokenManagement)
	}
	for _, p := range t.GetPolicies() {
		if s.ACLPolicyByName(p) == nil {
			return fmt.Errorf("%w: %q", ErrACLPolicyNotFound, p)
		}
	}
	if t.GetExpirationTTL() < 0 {
		return fmt.Errorf("%w: expiration TTL %d is negative", ErrBadACL, t.GetExpirationTTL())
	}
	return nil
}

func applyUpsertACLPolicies(w *writeTxn, c *messages.UpsertACLPolicies) any {
	for _, p := range c.GetPolicies() {
		if err := CheckACLPolicy(p); err != nil {
			return err
		}
	}
	for _, p := range c.GetPolicies() {
		p.CreateIndex, p.ModifyIndex = w.index, w.index
		if old := w.read().ACLPolicyByName(p.Name); old != nil {
			p.CreateIndex = old.CreateIndex
		}
		w.insert(TableACLPolicies, p)
	}
	w.changed[TableACLPolicies] = true
	return nil
}

func applyDeleteACLPolicies(w *writeTxn, c *messages.DeleteACLPolicies) any {
	for _, name := range c.GetNames() {
		if w.read().ACLPolicyByName(name) == nil {
			return fmt.Errorf("%w: %q", ErrACLPolicyNotFound, name)
		}
	}
	for _, name := range c.GetNames() {
		w.delete(TableACLPolicies, w.read().ACLPolicyByName(name))
	}
	w.changed[TableACLPolicies] = true
	return nil
}

// applyUpsertACLTokens stores tokens. An update keeps what a token was
// created with: its secret, type, creation time and expiration.
func applyUpsertACLTokens(w *writeTxn, c *messages.UpsertACLTokens) any {
	for _, t := range c.GetTokens() {
		if old := w.read().ACLTokenByAccessor(t.GetAccessorID()); old != nil {
			t.SecretHash, t.CreateTime, t.CreateIndex = old.SecretHash, old.CreateTime, old.CreateIndex
			t.ExpirationTime, t.ExpirationTTL, t.Global = old.ExpirationTime, old.ExpirationTTL, old.Global
			if t.Type != old.Type {
				return fmt.Errorf("%w: token %q cannot change type from %q to %q", ErrBadACL, t.AccessorID, old.Type, t.Type)
			}
		} else {
			t.CreateIndex = w.index
			if t.CreateTime == 0 {
				t.CreateTime = w.now
			}
			if t.ExpirationTTL > 0 && t.ExpirationTime == 0 {
				t.ExpirationTime = t.CreateTime + t.ExpirationTTL
			}
		}
		if err := CheckACLToken(w.read(), t); err != nil {
			return err
		}
		if o := w.read().ACLTokenBySecretHash(t.SecretHash); o != nil && o.AccessorID != t.AccessorID {
			return fmt.Errorf("%w: secret already in use", ErrBadACL)
		}
		t.ModifyIndex = w.index
		w.insert(TableACLTokens, t)
	}
	w.changed[TableACLTokens] = true
	return nil
}

func applyDeleteACLTokens(w *writeTxn, c *messages.DeleteACLTokens) any {
	for _, id := range c.GetAccessorIDs() {
		if w.read().ACLTokenByAccessor(id) == nil {
			return fmt.Errorf("%w: %q", ErrACLTokenNotFound, id)
		}
	}
	for _, id := range c.GetAccessorIDs() {
		w.delete(TableACLTokens, w.read().ACLTokenByAccessor(id))
	}
	w.changed[TableACLTokens] = true
	return nil
}

// applyBootstrapACL stores the first management token, once: again only
// when the command's reset index is the index of the bootstrap done.
func applyBootstrapACL(w *writeTxn, c *messages.BootstrapACL) any {
	if done := w.read().ACLBootstrapIndex(); done != 0 && c.GetResetIndex() != done {
		return &ACLBootstrappedError{ResetIndex: done}
	}
	t := c.GetToken()
	if t.GetType() != ACLTokenManagement {
		return fmt.Errorf("%w: the bootstrap token must be a management token", ErrBadACL)
	}
	if r := applyUpsertACLTokens(w, &messages.UpsertACLTokens{Tokens: []*messages.ACLToken{t}}); r != nil {
		return r
	}
	w.insert(tableACLBoot, &aclBoot{Index: w.index})
	return nil
}

// applyExpireACLTokens deletes the tokens expired at the command's time.
func applyExpireACLTokens(w *writeTxn) any {
	n := 0
	for _, t := range w.read().ACLTokens() {
		if t.ExpirationTime != 0 && t.ExpirationTime <= w.now {
			w.delete(TableACLTokens, t)
			n++
		}
	}
	if n > 0 {
		w.changed[TableACLTokens] = true
	}
	return n
}
