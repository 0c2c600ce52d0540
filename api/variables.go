package api

import (
	"net/http"
	"net/url"
	"strconv"
	"strings"
)

// Variable is a Nomad Variable with its items (GET /v1/var/:path).
type Variable struct {
	Namespace   string
	Path        string
	CreateIndex uint64
	ModifyIndex uint64
	CreateTime  int64
	ModifyTime  int64
	Items       map[string]string
}

// VariableMetadata is a variable without its items, as listed.
type VariableMetadata struct {
	Namespace   string
	Path        string
	CreateIndex uint64
	ModifyIndex uint64
	CreateTime  int64
	ModifyTime  int64
}

// RootKeyMeta describes a root key of the servers' keyring, without the
// key.
type RootKeyMeta struct {
	KeyID       string
	Algorithm   string
	CreateTime  int64
	CreateIndex uint64
	ModifyIndex uint64
	State       string
}

// Variables is the /v1/var/:path and /v1/vars family.
type Variables struct{ c *Client }

// Variables returns the variable endpoints.
func (c *Client) Variables() *Variables { return &Variables{c: c} }

func varPath(path string) string {
	parts := strings.Split(strings.Trim(path, " /"), "/")
	for i, p := range parts {
		parts[i] = escape(p)
	}
	return "/v1/var/" + strings.Join(parts, "/")
}

// Read reads a variable (GET /v1/var/:path); a missing one is an
// ErrNotFound.
func (v *Variables) Read(path string, q *QueryOptions) (*Variable, *QueryMeta, error) {
	var out Variable
	qm, err := v.c.query(varPath(path), &out, q)
	if err != nil {
		return nil, nil, err
	}
	return &out, qm, nil
}

// Put writes a variable's items (PUT /v1/var/:path). With check it is a
// check-and-set: it writes only when the stored variable's ModifyIndex is
// cas (0: none is stored); a conflict is an *APIError with status 409.
func (v *Variables) Put(path string, items map[string]string, check bool, cas uint64, w *WriteOptions) (*Variable, *WriteMeta, error) {
	var params url.Values
	if check {
		params = url.Values{"cas": {strconv.FormatUint(cas, 10)}}
	}
	var out Variable
	wm, err := v.c.writeParams(http.MethodPut, varPath(path), params, &Variable{Path: path, Items: items}, &out, w)
	if err != nil {
		return nil, nil, err
	}
	return &out, wm, nil
}

// Delete deletes a variable (DELETE /v1/var/:path).
func (v *Variables) Delete(path string, w *WriteOptions) (*WriteMeta, error) {
	return v.c.write(http.MethodDelete, varPath(path), nil, nil, w)
}

// List lists the variables whose path starts with q.Prefix, without their
// items (GET /v1/vars).
func (v *Variables) List(q *QueryOptions) ([]*VariableMetadata, *QueryMeta, error) {
	var out []*VariableMetadata
	qm, err := v.c.query("/v1/vars", &out, q)
	if err != nil {
		return nil, nil, err
	}
	return out, qm, nil
}

// Keyring is the /v1/operator/keyring family.
type Keyring struct{ c *Client }

// Keyring returns the keyring endpoints.
func (c *Client) Keyring() *Keyring { return &Keyring{c: c} }

// Rotate makes a new active root key (PUT /v1/operator/keyring/rotate).
func (k *Keyring) Rotate(w *WriteOptions) (*RootKeyMeta, *WriteMeta, error) {
	var out struct{ Key *RootKeyMeta }
	wm, err := k.c.write(http.MethodPut, "/v1/operator/keyring/rotate", nil, &out, w)
	if err != nil {
		return nil, nil, err
	}
	return out.Key, wm, nil
}

// List lists the root keys (GET /v1/operator/keyring/keys).
func (k *Keyring) List(q *QueryOptions) ([]*RootKeyMeta, *QueryMeta, error) {
	var out []*RootKeyMeta
	qm, err := k.c.query("/v1/operator/keyring/keys", &out, q)
	if err != nil {
		return nil, nil, err
	}
	return out, qm, nil
}
