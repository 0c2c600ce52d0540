package keyring

import (
	"bytes"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/troupe-dev/troupe/messages"
)

func mustKey(t *testing.T) *messages.RootKey {
	t.Helper()
	k, err := NewRootKey(time.Unix(100, 0))
	require.NoError(t, err)
	require.Len(t, k.Key, KeySize)
	require.Equal(t, messages.RootKeyState_ROOT_KEY_STATE_ACTIVE, k.State)
	return k
}

func TestSealOpenRoundTrip(t *testing.T) {
	k := mustKey(t)
	items := map[string]string{"user": "admin", "password": "hunter2"}
	d, err := Seal(k, "default", "app/db", items)
	require.NoError(t, err)
	require.Equal(t, k.KeyID, d.KeyID)
	require.False(t, bytes.Contains(d.Ciphertext, []byte("hunter2")), "ciphertext holds the plaintext")
	got, err := Open([]*messages.RootKey{k}, "default", "app/db", d)
	require.NoError(t, err)
	require.Equal(t, items, got)

	again, err := Seal(k, "default", "app/db", items)
	require.NoError(t, err)
	require.NotEqual(t, d.Nonce, again.Nonce, "each seal takes a fresh nonce")
}

func TestOpenRefuses(t *testing.T) {
	k, other := mustKey(t), mustKey(t)
	d, err := Seal(k, "default", "app/db", map[string]string{"a": "b"})
	require.NoError(t, err)
	tests := []struct {
		name      string
		keys      []*messages.RootKey
		ns, path  string
		data      *messages.VariableData
		wantError error
	}{
		{"key missing", []*messages.RootKey{other}, "default", "app/db", d, ErrKeyNotFound},
		{"wrong key under the same ID", []*messages.RootKey{{KeyID: k.KeyID, Key: other.Key}}, "default", "app/db", d, ErrOpen},
		{"moved to another path", []*messages.RootKey{k}, "default", "app/other", d, ErrOpen},
		{"moved to another namespace", []*messages.RootKey{k}, "prod", "app/db", d, ErrOpen},
		{"tampered", []*messages.RootKey{k}, "default", "app/db", tamper(d), ErrOpen},
		{"short key", []*messages.RootKey{{KeyID: k.KeyID, Key: k.Key[:16]}}, "default", "app/db", d, ErrBadKey},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := Open(tt.keys, tt.ns, tt.path, tt.data)
			require.ErrorIs(t, err, tt.wantError)
		})
	}
}

func tamper(d *messages.VariableData) *messages.VariableData {
	c := bytes.Clone(d.Ciphertext)
	c[0] ^= 1
	return &messages.VariableData{Ciphertext: c, KeyID: d.KeyID, Nonce: d.Nonce}
}

func TestRotationKeepsOldReadable(t *testing.T) {
	old := mustKey(t)
	d1, err := Seal(old, "default", "a", map[string]string{"v": "1"})
	require.NoError(t, err)
	old.State = messages.RootKeyState_ROOT_KEY_STATE_INACTIVE
	fresh := mustKey(t)
	keys := []*messages.RootKey{old, fresh}
	require.Equal(t, fresh, Active(keys))
	d2, err := Seal(Active(keys), "default", "b", map[string]string{"v": "2"})
	require.NoError(t, err)
	require.Equal(t, fresh.KeyID, d2.KeyID)
	for path, d := range map[string]*messages.VariableData{"a": d1, "b": d2} {
		_, err := Open(keys, "default", path, d)
		require.NoError(t, err, path)
	}
	require.Nil(t, Active([]*messages.RootKey{old}))
}
