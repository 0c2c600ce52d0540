package httpapi

import (
	"net/http"

	"github.com/troupe-dev/troupe/api"
	"github.com/troupe-dev/troupe/cluster/keyring"
	"github.com/troupe-dev/troupe/cluster/state"
	"github.com/troupe-dev/troupe/messages"
)

// keyringRotate handles PUT /v1/operator/keyring/rotate: a new active
// root key; the keys before keep opening what they sealed. The answer is
// Nomad's {"Key": RootKeyMeta}. (Nomad's ?full re-encryption is not
// offered: old variables stay sealed with their key.)
func (s *Server) keyringRotate(w http.ResponseWriter, r *http.Request) (any, error) {
	if s.writeToLeader(w, r) {
		return nil, errProxied
	}
	if boolParam(r, "full") {
		return nil, codeErr(http.StatusBadRequest, "full rotation (re-encrypting every variable) is not supported")
	}
	key, index, err := s.rotateKeyring(r)
	if err != nil {
		return nil, err
	}
	setIndex(w, index)
	return struct{ Key *api.RootKeyMeta }{Key: rootKeyMeta(key)}, nil
}

// keyringList handles GET /v1/operator/keyring/keys: the keys' metadata.
func (s *Server) keyringList(w http.ResponseWriter, r *http.Request) (any, error) {
	return s.query(w, r, rootKeyTables, func(snap *state.Snap) (any, error) {
		out := []*api.RootKeyMeta{}
		for _, k := range snap.RootKeys() {
			out = append(out, rootKeyMeta(k))
		}
		return out, nil
	})
}

// activeRootKey is the keyring's active key; on the first write to an
// empty keyring it makes one (two first writes at once make two keys, the
// later one active: both open what they sealed).
func (s *Server) activeRootKey(r *http.Request) (*messages.RootKey, error) {
	if k := keyring.Active(s.b.Store().Snapshot().RootKeys()); k != nil {
		return k, nil
	}
	k, _, err := s.rotateKeyring(r)
	return k, err
}

// rotateKeyring makes a key and commits it as the active one.
func (s *Server) rotateKeyring(r *http.Request) (*messages.RootKey, uint64, error) {
	key, err := keyring.NewRootKey(s.b.Now())
	if err != nil {
		return nil, 0, err
	}
	_, index, err := s.apply(r, &messages.Command{Cmd: &messages.Command_RotateKeyring{RotateKeyring: &messages.RotateKeyring{Key: key}}})
	if err != nil {
		return nil, 0, err
	}
	key.State = messages.RootKeyState_ROOT_KEY_STATE_ACTIVE
	key.CreateIndex, key.ModifyIndex = index, index
	return key, index, nil
}

func rootKeyMeta(k *messages.RootKey) *api.RootKeyMeta {
	return &api.RootKeyMeta{KeyID: k.KeyID, Algorithm: keyring.Algorithm, CreateTime: k.CreateTime,
		CreateIndex: k.CreateIndex, ModifyIndex: k.ModifyIndex, State: k.State.Name()}
}
