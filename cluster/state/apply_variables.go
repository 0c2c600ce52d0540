package state

import (
	"fmt"

	"github.com/troupe-dev/troupe/messages"
)

// rootKeySize is an AES-256 key's size.
const rootKeySize = 32

// applyVarApply sets or deletes a variable. The answer to a set is the
// stored variable (sealed); to a delete, nil; to a checked write whose
// index does not match, a *VariableCASError.
func applyVarApply(w *writeTxn, c *messages.VarApply) any {
	v := c.GetVar()
	if v == nil {
		return fmt.Errorf("%w: no variable", ErrInvalidVariable)
	}
	if err := ValidateVariablePath(v.Path); err != nil {
		return err
	}
	old := w.read().Variable(v.Namespace, v.Path)
	if c.CheckIndex && old.GetModifyIndex() != c.CAS {
		return &VariableCASError{CAS: c.CAS, Current: old}
	}
	switch c.Op {
	case messages.VarOp_VAR_OP_SET:
		return w.setVariable(old, v)
	case messages.VarOp_VAR_OP_DELETE:
		if old != nil {
			w.delete(TableVariables, old)
			w.changed[TableVariables] = true
		}
		return nil
	}
	return fmt.Errorf("%w: unknown op %v", ErrInvalidVariable, c.Op)
}

// setVariable stores v at this index, keeping old's creation; its data
// must be sealed with a key the keyring holds.
func (w *writeTxn) setVariable(old, v *messages.Variable) any {
	d := v.GetData()
	switch {
	case v.Namespace == "" || v.Namespace == AllNamespaces:
		return fmt.Errorf("%w: a variable needs a namespace (not %q)", ErrInvalidVariable, v.Namespace)
	case len(d.GetCiphertext()) == 0 || len(d.GetNonce()) == 0:
		return fmt.Errorf("%w: %s/%s is not sealed", ErrInvalidVariable, v.Namespace, v.Path)
	case len(d.GetCiphertext()) > maxSealedSize:
		return fmt.Errorf("%w: %s/%s has %d bytes sealed", ErrVariableTooLarge, v.Namespace, v.Path, len(d.Ciphertext))
	case first[*messages.RootKey](w.txn, TableRootKeys, idxID, d.GetKeyID()) == nil:
		return fmt.Errorf("%w: %s/%s is sealed with unknown key %q", ErrInvalidVariable, v.Namespace, v.Path, d.GetKeyID())
	}
	if err := w.inNamespace(v.Namespace, fmt.Sprintf("variable %q", v.Path)); err != nil {
		return err
	}
	v.CreateIndex, v.CreateTime = w.index, w.now
	if old != nil {
		v.CreateIndex, v.CreateTime = old.CreateIndex, old.CreateTime
	}
	v.ModifyIndex, v.ModifyTime = w.index, w.now
	w.insert(TableVariables, v)
	w.changed[TableVariables] = true
	return v
}

// applyRotateKeyring adds the command's key as the active root key and
// makes the key active before it inactive. The answer is the new key.
func applyRotateKeyring(w *writeTxn, c *messages.RotateKeyring) any {
	k := c.GetKey()
	switch {
	case k.GetKeyID() == "" || len(k.GetKey()) != rootKeySize:
		return fmt.Errorf("%w: want a key ID and a %d-byte key", ErrInvalidRootKey, rootKeySize)
	case first[*messages.RootKey](w.txn, TableRootKeys, idxID, k.KeyID) != nil:
		return fmt.Errorf("%w: key %q is already in the keyring", ErrInvalidRootKey, k.KeyID)
	}
	for _, old := range w.read().RootKeys() {
		if old.State == messages.RootKeyState_ROOT_KEY_STATE_ACTIVE {
			cp := shallowCopy(old)
			cp.State, cp.ModifyIndex = messages.RootKeyState_ROOT_KEY_STATE_INACTIVE, w.index
			w.insert(TableRootKeys, cp)
		}
	}
	k.State = messages.RootKeyState_ROOT_KEY_STATE_ACTIVE
	k.CreateIndex, k.ModifyIndex = w.index, w.index
	w.insert(TableRootKeys, k)
	w.changed[TableRootKeys] = true
	return k
}

// restoreVariables inserts a snapshot's variables and keys.
func (w *writeTxn) restoreVariables(rec *messages.Snapshot) {
	for _, k := range rec.RootKeys {
		w.insert(TableRootKeys, k)
	}
	for _, v := range rec.Variables {
		w.insert(TableVariables, v)
	}
}
