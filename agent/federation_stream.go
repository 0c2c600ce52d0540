package agent

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httputil"
	"strings"

	"github.com/troupe-dev/troupe/api"
)

// A forwarded answer cut short. Once the answer's status and headers are
// on their way, a tunnel that breaks (the region's link cut, its server
// killed: the tunnel's keepalive ends it within its timeout) can no
// longer turn into an error status. A client that asked for trailers (TE:
// trailers, as troupe's api package does for streams) gets the answer
// ended cleanly with api.StreamErrorTrailer naming the region and why;
// any other gets it aborted (the connection closed mid-body), as a plain
// reverse proxy does, so that it never mistakes the cut for the end.

// streamBreakKey is the context key of where a forwarded request's
// answer records the error that cut it short.
type streamBreakKey struct{}

// regionProxy serves requests for region through p.
func regionProxy(region string, p *httputil.ReverseProxy) http.Handler {
	p.ModifyResponse = func(res *http.Response) error {
		if broke, ok := res.Request.Context().Value(streamBreakKey{}).(*error); ok {
			res.Body = &breakRecorder{ReadCloser: res.Body, ctx: res.Request.Context(), err: broke}
		}
		return nil
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if !acceptsTrailers(r) {
			p.ServeHTTP(w, r)
			return
		}
		var broke error
		p.ServeHTTP(w, r.WithContext(context.WithValue(r.Context(), streamBreakKey{}, &broke)))
		if broke != nil {
			w.Header().Set(http.TrailerPrefix+api.StreamErrorTrailer, fmt.Sprintf("forwarding to region %q: %v", region, broke))
		}
	})
}

// acceptsTrailers says whether r's client takes trailers (TE: trailers).
func acceptsTrailers(r *http.Request) bool {
	for _, v := range r.Header.Values("Te") {
		for _, tok := range strings.Split(v, ",") {
			if t, _, _ := strings.Cut(strings.TrimSpace(tok), ";"); strings.EqualFold(t, "trailers") {
				return true
			}
		}
	}
	return false
}

// breakRecorder is a forwarded answer's body that ends at an error,
// recording it in err, unless the client went away (ctx done).
type breakRecorder struct {
	io.ReadCloser
	ctx context.Context
	err *error
}

func (b *breakRecorder) Read(p []byte) (int, error) {
	n, err := b.ReadCloser.Read(p)
	if err != nil && !errors.Is(err, io.EOF) && b.ctx.Err() == nil {
		*b.err = err
		return n, io.EOF
	}
	return n, err
}
