package api

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"strconv"
	"strings"
	"time"
)

// DefaultAddress is used when neither Config.Address nor TROUPE_ADDR is set.
const DefaultAddress = "http://127.0.0.1:4646"

// AddressEnv names the environment variable that holds the agent address.
const AddressEnv = "TROUPE_ADDR"

// maxErrorBody bounds how much of an error response is kept.
const maxErrorBody = 64 << 10

// Config configures a Client.
type Config struct {
	// Address is the agent's HTTP address, e.g. http://127.0.0.1:4646. A
	// bare host:port gets http://.
	Address string
	// HTTPClient defaults to a client without a timeout (blocking queries
	// and log streams last long; bound them with contexts).
	HTTPClient *http.Client
	// Namespace is sent as ?namespace= on every request whose options name
	// none (as Nomad's client sends its configured namespace); "" sends
	// none, which the agent reads as "default".
	Namespace string
	// Token is the ACL token's secret sent as X-Nomad-Token on every
	// request ("" sends none: the anonymous policy applies).
	Token string
	// Region is sent as ?region= on every request whose options name none
	// (the agent forwards it to a server of that region); "" sends none:
	// the agent's own region.
	Region string
}

// DefaultConfig reads the address from TROUPE_ADDR, else DefaultAddress.
func DefaultConfig() *Config {
	addr := os.Getenv(AddressEnv)
	if addr == "" {
		addr = DefaultAddress
	}
	return &Config{Address: addr}
}

// Client talks to troupe's /v1 HTTP API.
type Client struct {
	base      *url.URL
	http      *http.Client
	namespace string
	token     string
	region    string
}

// NewClient builds a client. A nil cfg means DefaultConfig.
func NewClient(cfg *Config) (*Client, error) {
	if cfg == nil {
		cfg = DefaultConfig()
	}
	addr := cfg.Address
	if addr == "" {
		addr = DefaultConfig().Address
	}
	if !strings.Contains(addr, "://") {
		addr = "http://" + addr
	}
	u, err := url.Parse(addr)
	if err != nil {
		return nil, fmt.Errorf("%w: %q: %v", ErrBadAddress, cfg.Address, err)
	}
	if u.Host == "" || (u.Scheme != "http" && u.Scheme != "https") {
		return nil, fmt.Errorf("%w: %q", ErrBadAddress, cfg.Address)
	}
	hc := cfg.HTTPClient
	if hc == nil {
		hc = &http.Client{}
	}
	return &Client{base: u, http: hc, namespace: cfg.Namespace, token: cfg.Token, region: cfg.Region}, nil
}

// Namespace is the namespace sent on requests whose options name none.
func (c *Client) Namespace() string { return c.namespace }

// SetNamespace changes the namespace sent on requests whose options name
// none (Config.Namespace).
func (c *Client) SetNamespace(ns string) { c.namespace = ns }

// Address is the agent address this client talks to.
func (c *Client) Address() string { return c.base.String() }

// request is one HTTP call being built.
type request struct {
	method string
	path   string
	params url.Values
	header http.Header
	body   any
	ctx    context.Context
}

func (c *Client) newRequest(method, path string) *request {
	r := &request{method: method, path: path, params: url.Values{}, header: http.Header{}, ctx: context.Background()}
	setNonEmpty(r.params, "namespace", c.namespace) // the options' own namespace replaces it
	setNonEmpty(r.params, "region", c.region)       // and their region this one
	if c.token != "" {
		r.header.Set(TokenHeader, c.token)
	}
	return r
}

func (r *request) setQuery(q *QueryOptions) {
	if q == nil {
		return
	}
	setNonEmpty(r.params, "region", q.Region)
	setNonEmpty(r.params, "namespace", q.Namespace)
	setNonEmpty(r.params, "prefix", q.Prefix)
	setNonEmpty(r.params, "filter", q.Filter)
	if q.AllowStale {
		r.params.Set("stale", "")
	}
	if q.WaitIndex != 0 {
		r.params.Set("index", strconv.FormatUint(q.WaitIndex, 10))
	}
	if q.WaitTime != 0 {
		r.params.Set("wait", q.WaitTime.String())
	}
	for k, v := range q.Params {
		r.params.Set(k, v)
	}
	r.ctx = q.Context()
}

func (r *request) setWrite(w *WriteOptions) {
	if w == nil {
		return
	}
	setNonEmpty(r.params, "region", w.Region)
	setNonEmpty(r.params, "namespace", w.Namespace)
	r.ctx = w.Context()
}

func setNonEmpty(v url.Values, key, val string) {
	if val != "" {
		v.Set(key, val)
	}
}

// do sends r and returns the response of a 2xx; any other status becomes
// an *APIError. The caller closes the body.
func (c *Client) do(r *request) (*http.Response, error) {
	u := *c.base
	// r.path holds escaped IDs (escape): keep them as sent.
	raw := strings.TrimSuffix(u.EscapedPath(), "/") + r.path
	p, err := url.PathUnescape(raw)
	if err != nil {
		return nil, fmt.Errorf("api: bad path %q: %w", raw, err)
	}
	u.Path, u.RawPath = p, raw
	u.RawQuery = r.params.Encode()
	var body io.Reader
	if r.body != nil {
		buf, err := json.Marshal(r.body)
		if err != nil {
			return nil, fmt.Errorf("api: encode %s %s: %w", r.method, r.path, err)
		}
		body = bytes.NewReader(buf)
	}
	req, err := http.NewRequestWithContext(r.ctx, r.method, u.String(), body)
	if err != nil {
		return nil, err
	}
	for k, v := range r.header {
		req.Header[k] = v
	}
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	resp, err := c.http.Do(req)
	if err != nil {
		return nil, err
	}
	if resp.StatusCode/100 != 2 {
		defer resp.Body.Close()
		msg, _ := io.ReadAll(io.LimitReader(resp.Body, maxErrorBody))
		return nil, &APIError{StatusCode: resp.StatusCode, Body: strings.TrimSpace(string(msg))}
	}
	return resp, nil
}

// query runs a GET and decodes the JSON answer into out.
func (c *Client) query(path string, out any, q *QueryOptions) (*QueryMeta, error) {
	r := c.newRequest(http.MethodGet, path)
	r.setQuery(q)
	resp, err := c.do(r)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	qm := parseQueryMeta(resp.Header)
	if err := decodeBody(resp.Body, out); err != nil {
		return nil, err
	}
	return qm, nil
}

// write runs a PUT, POST or DELETE with an optional JSON body and decodes
// the JSON answer into out (when out is not nil).
func (c *Client) write(method, path string, in, out any, w *WriteOptions) (*WriteMeta, error) {
	return c.writeParams(method, path, nil, in, out, w)
}

// writeParams is write with extra query parameters.
func (c *Client) writeParams(method, path string, params url.Values, in, out any, w *WriteOptions) (*WriteMeta, error) {
	return c.writeRequest(method, path, params, nil, in, out, w)
}

// writeRequest is write with extra query parameters and headers.
func (c *Client) writeRequest(method, path string, params url.Values, header http.Header, in, out any, w *WriteOptions) (*WriteMeta, error) {
	r := c.newRequest(method, path)
	r.setWrite(w)
	for k, v := range params {
		r.params[k] = v
	}
	for k, v := range header {
		r.header[k] = v
	}
	r.body = in
	resp, err := c.do(r)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	wm := &WriteMeta{LastIndex: parseQueryMeta(resp.Header).LastIndex}
	if out == nil {
		_, _ = io.Copy(io.Discard, resp.Body)
		return wm, nil
	}
	if err := decodeBody(resp.Body, out); err != nil {
		return nil, err
	}
	return wm, nil
}

func decodeBody(body io.Reader, out any) error {
	if err := json.NewDecoder(body).Decode(out); err != nil {
		return fmt.Errorf("%w: %v", ErrDecode, err)
	}
	return nil
}

// parseQueryMeta reads X-Nomad-Index (or X-Troupe-Index),
// X-Nomad-KnownLeader and X-Nomad-LastContact (milliseconds). Missing or
// malformed headers leave zero values.
func parseQueryMeta(h http.Header) *QueryMeta {
	qm := &QueryMeta{}
	idx := h.Get("X-Nomad-Index")
	if idx == "" {
		idx = h.Get("X-Troupe-Index")
	}
	qm.LastIndex, _ = strconv.ParseUint(idx, 10, 64)
	qm.KnownLeader = h.Get("X-Nomad-KnownLeader") == "true"
	if ms, err := strconv.ParseUint(h.Get("X-Nomad-LastContact"), 10, 32); err == nil {
		qm.LastContact = time.Duration(ms) * time.Millisecond
	}
	return qm
}

// escape makes an ID safe as one path segment.
func escape(id string) string { return url.PathEscape(id) }
