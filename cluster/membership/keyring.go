package membership

import (
	"bytes"
	"fmt"
)

// Keyring operations change the gossip keys of this member only, at once:
// a cluster-wide rotation installs the new key everywhere, then uses it
// everywhere, then removes the old one everywhere, so that every member
// reads every other at each step.

// Keys are the installed gossip keys, the primary (which encrypts what
// this member sends) first.
func (m *Membership) Keys() ([][]byte, error) {
	if m.keys == nil {
		return nil, ErrNoKeyring
	}
	primary := m.keys.GetPrimaryKey()
	out := [][]byte{primary}
	for _, k := range m.keys.GetKeys() {
		if !bytes.Equal(k, primary) {
			out = append(out, k)
		}
	}
	return out, nil
}

// InstallKey adds key to the keyring: gossip encrypted with it is read.
func (m *Membership) InstallKey(key []byte) error {
	if m.keys == nil {
		return ErrNoKeyring
	}
	if err := m.keys.AddKey(key); err != nil {
		return fmt.Errorf("membership: install key: %w", err)
	}
	return nil
}

// UseKey makes an installed key the primary one.
func (m *Membership) UseKey(key []byte) error {
	if err := m.installed(key); err != nil {
		return err
	}
	if err := m.keys.UseKey(key); err != nil {
		return fmt.Errorf("membership: use key: %w", err)
	}
	return nil
}

// RemoveKey drops an installed key that is not the primary one.
func (m *Membership) RemoveKey(key []byte) error {
	if err := m.installed(key); err != nil {
		return err
	}
	if bytes.Equal(key, m.keys.GetPrimaryKey()) {
		return ErrPrimaryKey
	}
	if err := m.keys.RemoveKey(key); err != nil {
		return fmt.Errorf("membership: remove key: %w", err)
	}
	return nil
}

func (m *Membership) installed(key []byte) error {
	if m.keys == nil {
		return ErrNoKeyring
	}
	for _, k := range m.keys.GetKeys() {
		if bytes.Equal(k, key) {
			return nil
		}
	}
	return ErrUnknownKey
}
