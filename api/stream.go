package api

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
)

// StreamErrorTrailer is the trailer that ends a streamed answer an agent
// had to cut short (a request forwarded to another region whose link
// broke mid-stream), naming why. It is sent only to a client that asked
// for trailers (TE: trailers, as this package's streams do); any other
// sees the answer aborted.
const StreamErrorTrailer = "X-Troupe-Stream-Error"

// ErrStreamBroken is what reading a stream returns at its end when the
// agent cut it short (the StreamErrorTrailer's text follows).
var ErrStreamBroken = errors.New("api: stream broken")

// askTrailers makes r's stream end with the StreamErrorTrailer when an
// agent cuts it short.
func (r *request) askTrailers() { r.header.Set("TE", "trailers") }

// trailerBody is a stream's body whose end is an error when the agent cut
// it short.
type trailerBody struct{ resp *http.Response }

func (b trailerBody) Read(p []byte) (int, error) {
	n, err := b.resp.Body.Read(p)
	if err == io.EOF {
		if msg := b.resp.Trailer.Get(StreamErrorTrailer); msg != "" {
			return n, fmt.Errorf("%w: %s", ErrStreamBroken, msg)
		}
	}
	return n, err
}

func (b trailerBody) Close() error { return b.resp.Body.Close() }

// Stream opens a streaming GET of path with params (the event stream,
// the agent monitor) and returns its body, open until ctx ends or the
// agent ends it; a non-2xx answer is an *APIError, and a stream the agent
// cut short ends with ErrStreamBroken.
func (c *Client) Stream(ctx context.Context, path string, params url.Values) (io.ReadCloser, error) {
	r := c.newRequest(http.MethodGet, path)
	r.ctx = ctx
	for k, vs := range params {
		r.params[k] = vs
	}
	r.askTrailers()
	resp, err := c.do(r)
	if err != nil {
		return nil, err
	}
	return trailerBody{resp}, nil
}
