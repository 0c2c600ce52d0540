package api

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strconv"
	"time"
)

// TokenHeader carries an ACL token's secret on a request.
const TokenHeader = "X-Nomad-Token"

// ACLPolicy is a policy as /v1/acl/policy answers it (Nomad's shape).
type ACLPolicy struct {
	Name        string
	Description string
	Rules       string
	CreateIndex uint64
	ModifyIndex uint64
}

// ACLPolicyListStub is one policy in /v1/acl/policies.
type ACLPolicyListStub struct {
	Name        string
	Description string
	CreateIndex uint64
	ModifyIndex uint64
}

// ACLToken is a token as /v1/acl/token answers it. SecretID is set only
// in the answer that creates the token (and the bootstrap's).
type ACLToken struct {
	AccessorID     string
	SecretID       string
	Name           string
	Type           string
	Policies       []string
	Roles          []any `json:",omitempty"`
	Global         bool
	CreateTime     time.Time
	ExpirationTime *time.Time `json:",omitempty"`
	ExpirationTTL  Duration   `json:",omitempty"`
	CreateIndex    uint64
	ModifyIndex    uint64
}

// ACLTokenListStub is one token in /v1/acl/tokens: never its secret.
type ACLTokenListStub struct {
	AccessorID     string
	Name           string
	Type           string
	Policies       []string
	Global         bool
	CreateTime     time.Time
	ExpirationTime *time.Time `json:",omitempty"`
	CreateIndex    uint64
	ModifyIndex    uint64
}

// ACLBootstrapRequest is the optional body of POST /v1/acl/bootstrap: the
// operator's own secret for the management token.
type ACLBootstrapRequest struct {
	BootstrapSecret string
}

// Duration is a time.Duration that reads from JSON as nanoseconds or as a
// Go duration string ("1h"; Nomad's client sends "" for none).
type Duration time.Duration

// MarshalJSON writes nanoseconds.
func (d Duration) MarshalJSON() ([]byte, error) { return []byte(strconv.FormatInt(int64(d), 10)), nil }

// UnmarshalJSON reads nanoseconds or a duration string.
func (d *Duration) UnmarshalJSON(b []byte) error {
	var s string
	if err := json.Unmarshal(b, &s); err == nil {
		if s == "" {
			*d = 0
			return nil
		}
		v, err := time.ParseDuration(s)
		if err != nil {
			return fmt.Errorf("invalid duration %q: %w", s, err)
		}
		*d = Duration(v)
		return nil
	}
	var n int64
	if err := json.Unmarshal(b, &n); err != nil {
		return fmt.Errorf("invalid duration %s", b)
	}
	*d = Duration(n)
	return nil
}

// ACL is the /v1/acl family.
type ACL struct{ c *Client }

// ACL returns the ACL endpoints.
func (c *Client) ACL() *ACL { return &ACL{c: c} }

// Bootstrap makes the first management token (POST /v1/acl/bootstrap).
func (a *ACL) Bootstrap(secret string) (*ACLToken, error) {
	var out ACLToken
	var in any
	if secret != "" {
		in = &ACLBootstrapRequest{BootstrapSecret: secret}
	}
	if _, err := a.c.write(http.MethodPost, "/v1/acl/bootstrap", in, &out, nil); err != nil {
		return nil, err
	}
	return &out, nil
}

// Policies lists the policies (GET /v1/acl/policies).
func (a *ACL) Policies() ([]*ACLPolicyListStub, error) {
	var out []*ACLPolicyListStub
	_, err := a.c.query("/v1/acl/policies", &out, nil)
	return out, err
}

// Policy reads one policy (GET /v1/acl/policy/:name).
func (a *ACL) Policy(name string) (*ACLPolicy, error) {
	var out ACLPolicy
	if _, err := a.c.query("/v1/acl/policy/"+escape(name), &out, nil); err != nil {
		return nil, err
	}
	return &out, nil
}

// ApplyPolicy creates or replaces a policy (POST /v1/acl/policy/:name).
func (a *ACL) ApplyPolicy(p *ACLPolicy) error {
	_, err := a.c.write(http.MethodPost, "/v1/acl/policy/"+escape(p.Name), p, nil, nil)
	return err
}

// DeletePolicy deletes a policy (DELETE /v1/acl/policy/:name).
func (a *ACL) DeletePolicy(name string) error {
	_, err := a.c.write(http.MethodDelete, "/v1/acl/policy/"+escape(name), nil, nil, nil)
	return err
}

// Tokens lists the tokens (GET /v1/acl/tokens).
func (a *ACL) Tokens() ([]*ACLTokenListStub, error) {
	var out []*ACLTokenListStub
	_, err := a.c.query("/v1/acl/tokens", &out, nil)
	return out, err
}

// CreateToken makes a token (POST /v1/acl/token); the answer has its secret.
func (a *ACL) CreateToken(t *ACLToken) (*ACLToken, error) {
	var out ACLToken
	if _, err := a.c.write(http.MethodPost, "/v1/acl/token", t, &out, nil); err != nil {
		return nil, err
	}
	return &out, nil
}

// UpdateToken changes a token's name or policies (POST /v1/acl/token/:accessor).
func (a *ACL) UpdateToken(t *ACLToken) (*ACLToken, error) {
	var out ACLToken
	if _, err := a.c.write(http.MethodPost, "/v1/acl/token/"+escape(t.AccessorID), t, &out, nil); err != nil {
		return nil, err
	}
	return &out, nil
}

// Token reads one token (GET /v1/acl/token/:accessor).
func (a *ACL) Token(accessor string) (*ACLToken, error) {
	var out ACLToken
	if _, err := a.c.query("/v1/acl/token/"+escape(accessor), &out, nil); err != nil {
		return nil, err
	}
	return &out, nil
}

// Self reads the token the client sends (GET /v1/acl/token/self).
func (a *ACL) Self() (*ACLToken, error) { return a.Token("self") }

// DeleteToken deletes a token (DELETE /v1/acl/token/:accessor).
func (a *ACL) DeleteToken(accessor string) error {
	_, err := a.c.write(http.MethodDelete, "/v1/acl/token/"+escape(accessor), nil, nil, nil)
	return err
}
