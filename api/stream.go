package api

import (
	"context"
	"io"
	"net/http"
	"net/url"
)

// Stream opens a streaming GET of path with params (the event stream,
// the agent monitor) and returns its body, open until ctx ends or the
// agent ends it; a non-2xx answer is an *APIError.
func (c *Client) Stream(ctx context.Context, path string, params url.Values) (io.ReadCloser, error) {
	r := c.newRequest(http.MethodGet, path)
	r.ctx = ctx
	for k, vs := range params {
		r.params[k] = vs
	}
	resp, err := c.do(r)
	if err != nil {
		return nil, err
	}
	return resp.Body, nil
}
