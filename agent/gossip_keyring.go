package agent

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"github.com/troupe-dev/troupe/cluster/membership"
	"github.com/troupe-dev/troupe/httpapi"
)

// keyringFile is where an agent keeps its gossip keys, primary first, as
// Nomad's server/serf.keyring: a JSON array of base64 keys. When it exists
// it wins over -encrypt (the keys may have been rotated since).
const keyringFile = "serf.keyring"

// keyringFanoutTimeout bounds one member's answer to a keyring operation.
const keyringFanoutTimeout = 10 * time.Second

func (a *Agent) keyringPath() string {
	role := "client"
	if a.cfg.Server {
		role = "server"
	}
	return filepath.Join(a.dataDir, role, keyringFile)
}

// gossipKeys are the keys gossip starts with: the keyring file's, else
// the -encrypt key (then written to the file); none without either.
func (a *Agent) gossipKeys() (primary []byte, others [][]byte, err error) {
	buf, err := os.ReadFile(a.keyringPath())
	switch {
	case err == nil:
		var keys []string
		if err := json.Unmarshal(buf, &keys); err != nil || len(keys) == 0 {
			return nil, nil, fmt.Errorf("agent: keyring file %s: not a JSON array of keys (%v)", a.keyringPath(), err)
		}
		raw := make([][]byte, 0, len(keys))
		for _, k := range keys {
			b, err := GossipKeyBytes(k)
			if err != nil {
				return nil, nil, fmt.Errorf("agent: keyring file %s: %w", a.keyringPath(), err)
			}
			raw = append(raw, b)
		}
		if a.cfg.GossipKey != "" {
			a.log.Info("gossip keys read from the keyring file; -encrypt is ignored", "file", a.keyringPath())
		}
		return raw[0], raw[1:], nil
	case !errors.Is(err, os.ErrNotExist):
		return nil, nil, fmt.Errorf("agent: keyring file: %w", err)
	}
	key, err := GossipKeyBytes(a.cfg.GossipKey)
	if err != nil || key == nil {
		return nil, nil, err
	}
	return key, nil, writeKeyring(a.keyringPath(), [][]byte{key})
}

// writeKeyring replaces the keyring file (through a rename, so a crash
// leaves the old or the new one).
func writeKeyring(path string, keys [][]byte) error {
	out := make([]string, 0, len(keys))
	for _, k := range keys {
		out = append(out, base64.StdEncoding.EncodeToString(k))
	}
	buf, err := json.Marshal(out)
	if err != nil {
		return err
	}
	tmp := path + ".tmp"
	if err := os.WriteFile(tmp, buf, 0o600); err != nil {
		return fmt.Errorf("agent: keyring file: %w", err)
	}
	if err := os.Rename(tmp, path); err != nil {
		return fmt.Errorf("agent: keyring file: %w", err)
	}
	return nil
}

func badKeyring(format string, args ...any) error {
	return &httpapi.HTTPError{Code: http.StatusBadRequest, Msg: fmt.Sprintf(format, args...)}
}

// GossipKeyring carries out a keyring operation (httpapi.GossipKeyring):
// on this agent only when local, else on every live member of the gossip
// pool, servers and clients (so that a rotation leaves no one behind),
// with each node's error in Messages.
func (a *Agent) GossipKeyring(ctx context.Context, op, key string, local bool) (*httpapi.KeyringResponse, error) {
	if a.members == nil {
		return nil, badKeyring("this agent does not gossip (a -dev agent has no keyring)")
	}
	var raw []byte
	switch op {
	case httpapi.KeyringList:
	case httpapi.KeyringInstall, httpapi.KeyringUse, httpapi.KeyringRemove:
		b, err := GossipKeyBytes(key)
		if err != nil {
			return nil, badKeyring("%v", err)
		}
		raw = b
	default:
		return nil, badKeyring("unknown keyring operation %q", op)
	}
	if local {
		return a.keyringLocal(op, raw)
	}
	if op == httpapi.KeyringRemove { // refused before any member changes
		if keys, err := a.members.Keys(); err == nil && bytes.Equal(keys[0], raw) {
			return nil, badKeyring("%v", membership.ErrPrimaryKey)
		}
	}
	out := &httpapi.KeyringResponse{Messages: map[string]string{}, Keys: map[string]int{}}
	add := func(name string, r *httpapi.KeyringResponse, err error) {
		out.NumNodes++
		if err != nil {
			out.Messages[name] = err.Error()
			return
		}
		for k, n := range r.Keys {
			out.Keys[k] += n
		}
	}
	self := a.members.LocalMember().Name
	r, err := a.keyringLocal(op, raw)
	add(self, r, err)
	client := a.peerHTTPClient()
	defer client.CloseIdleConnections()
	for _, m := range a.members.Members() {
		if m.Status == membership.StatusAlive && m.Name != self {
			r, err := a.keyringRemote(ctx, client, m.Meta.HTTPAddr, op, key)
			add(m.Name, r, err)
		}
	}
	if len(out.Messages) > 0 {
		return nil, fmt.Errorf("agent: keyring %s failed on %d of %d nodes: %s", op, len(out.Messages), out.NumNodes, describeMessages(out.Messages))
	}
	return out, nil
}

func describeMessages(m map[string]string) string {
	parts := make([]string, 0, len(m))
	for n, msg := range m {
		parts = append(parts, n+": "+msg)
	}
	sort.Strings(parts)
	return strings.Join(parts, "; ")
}

// keyringLocal applies op to this agent's keyring and saves the result.
func (a *Agent) keyringLocal(op string, key []byte) (*httpapi.KeyringResponse, error) {
	err := keyringOp(a.members, op, key)
	if err == nil && a.wan != nil {
		// The WAN pool shares the keys (wan.go). Every region's servers
		// must rotate alike for the regions to keep hearing each other.
		err = keyringOp(a.wan, op, key)
	}
	if errors.Is(err, membership.ErrPrimaryKey) || errors.Is(err, membership.ErrUnknownKey) || errors.Is(err, membership.ErrNoKeyring) {
		return nil, badKeyring("%v", err)
	}
	if err != nil {
		return nil, err
	}
	keys, err := a.members.Keys()
	if err != nil {
		return nil, badKeyring("%v", err)
	}
	if op != httpapi.KeyringList {
		if err := writeKeyring(a.keyringPath(), keys); err != nil {
			return nil, err
		}
		a.log.Info("gossip keyring changed", "op", op, "keys", len(keys))
	}
	out := &httpapi.KeyringResponse{Messages: map[string]string{}, Keys: map[string]int{}, NumNodes: 1}
	for _, k := range keys {
		out.Keys[base64.StdEncoding.EncodeToString(k)] = 1
	}
	return out, nil
}

// keyringOp applies op to one gossip pool's keyring.
func keyringOp(m *membership.Membership, op string, key []byte) error {
	switch op {
	case httpapi.KeyringInstall:
		return m.InstallKey(key)
	case httpapi.KeyringUse:
		return m.UseKey(key)
	case httpapi.KeyringRemove:
		return m.RemoveKey(key)
	}
	return nil
}

// keyringRemote asks the agent whose API is at addr to apply op to its
// own keyring.
func (a *Agent) keyringRemote(ctx context.Context, client *http.Client, addr, op, key string) (*httpapi.KeyringResponse, error) {
	if addr == "" {
		return nil, errors.New("the member advertises no HTTP address")
	}
	ctx, cancel := context.WithTimeout(ctx, keyringFanoutTimeout)
	defer cancel()
	scheme := "http"
	if a.httpsOn() {
		scheme = "https"
	}
	return httpapi.CallKeyring(ctx, client, scheme+"://"+addr, op, key, "", true)
}

// peerHTTPClient calls other agents' APIs, servers' and clients': over
// HTTPS with this agent's certificate when the API is HTTPS.
func (a *Agent) peerHTTPClient() *http.Client {
	if rt := a.proxyTransport(); rt != nil {
		return &http.Client{Transport: rt}
	}
	return &http.Client{Transport: &http.Transport{}}
}
