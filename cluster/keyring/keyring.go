package keyring

import (
	"crypto/aes"
	"crypto/cipher"
	"crypto/rand"
	"fmt"
	"io"
	"time"

	uuid "github.com/hashicorp/go-uuid"
	"google.golang.org/protobuf/proto"

	"github.com/troupe-dev/troupe/messages"
)

// KeySize is the size of a root key: AES-256.
const KeySize = 32

// Algorithm is the name Nomad's keyring API gives the cipher.
const Algorithm = "aes256-gcm"

// NewRootKey makes an active root key from crypto/rand, created at now.
func NewRootKey(now time.Time) (*messages.RootKey, error) {
	return newRootKey(rand.Reader, now)
}

func newRootKey(r io.Reader, now time.Time) (*messages.RootKey, error) {
	key := make([]byte, KeySize)
	if _, err := io.ReadFull(r, key); err != nil {
		return nil, fmt.Errorf("keyring: new root key: %w", err)
	}
	id, err := uuid.GenerateUUID()
	if err != nil {
		return nil, fmt.Errorf("keyring: new root key ID: %w", err)
	}
	return &messages.RootKey{KeyID: id, Key: key, CreateTime: now.UnixNano(),
		State: messages.RootKeyState_ROOT_KEY_STATE_ACTIVE}, nil
}

// Seal encrypts items under key, bound to namespace and path.
func Seal(key *messages.RootKey, namespace, path string, items map[string]string) (*messages.VariableData, error) {
	aead, err := newAEAD(key)
	if err != nil {
		return nil, err
	}
	plain, err := proto.MarshalOptions{Deterministic: true}.Marshal(&messages.VariableItems{Items: items})
	if err != nil {
		return nil, fmt.Errorf("keyring: encode items: %w", err)
	}
	nonce := make([]byte, aead.NonceSize())
	if _, err := rand.Read(nonce); err != nil {
		return nil, fmt.Errorf("keyring: nonce: %w", err)
	}
	return &messages.VariableData{
		Ciphertext: aead.Seal(nil, nonce, plain, additionalData(namespace, path)),
		KeyID:      key.KeyID,
		Nonce:      nonce,
	}, nil
}

// Open decrypts data, sealed for namespace and path, with the key of the
// keys that data.KeyID names.
func Open(keys []*messages.RootKey, namespace, path string, data *messages.VariableData) (map[string]string, error) {
	key := find(keys, data.GetKeyID())
	if key == nil {
		return nil, fmt.Errorf("%w: %q", ErrKeyNotFound, data.GetKeyID())
	}
	aead, err := newAEAD(key)
	if err != nil {
		return nil, err
	}
	if len(data.GetNonce()) != aead.NonceSize() {
		return nil, fmt.Errorf("%w: nonce of %d bytes", ErrOpen, len(data.GetNonce()))
	}
	plain, err := aead.Open(nil, data.GetNonce(), data.GetCiphertext(), additionalData(namespace, path))
	if err != nil {
		return nil, fmt.Errorf("%w: %s/%s with key %q", ErrOpen, namespace, path, key.KeyID)
	}
	var items messages.VariableItems
	if err := proto.Unmarshal(plain, &items); err != nil {
		return nil, fmt.Errorf("%w: items: %w", ErrOpen, err)
	}
	if items.Items == nil {
		items.Items = map[string]string{}
	}
	return items.Items, nil
}

// Active returns the active key of keys, or nil.
func Active(keys []*messages.RootKey) *messages.RootKey {
	for _, k := range keys {
		if k.State == messages.RootKeyState_ROOT_KEY_STATE_ACTIVE {
			return k
		}
	}
	return nil
}

func find(keys []*messages.RootKey, id string) *messages.RootKey {
	for _, k := range keys {
		if k.KeyID == id {
			return k
		}
	}
	return nil
}

func newAEAD(key *messages.RootKey) (cipher.AEAD, error) {
	if len(key.GetKey()) != KeySize {
		return nil, fmt.Errorf("%w: %q has %d bytes, want %d", ErrBadKey, key.GetKeyID(), len(key.GetKey()), KeySize)
	}
	block, err := aes.NewCipher(key.Key)
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrBadKey, err)
	}
	return cipher.NewGCM(block)
}

// additionalData binds a ciphertext to its variable: namespace, NUL, path.
func additionalData(namespace, path string) []byte {
	return append(append([]byte(namespace), 0), path...)
}
