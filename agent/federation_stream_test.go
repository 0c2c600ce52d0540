package agent

import (
	"context"
	"errors"
	"io"
	"log"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/troupe-dev/troupe/api"
	"github.com/troupe-dev/troupe/cluster/tunnel"
)

// cutStream is a round trip whose answer streams one line and then breaks
// as a tunnel whose peer went silent does.
type cutStream struct{}

func (cutStream) RoundTrip(r *http.Request) (*http.Response, error) {
	body := io.MultiReader(strings.NewReader("line one\n"), errReader{tunnel.ErrNoAnswer})
	return &http.Response{StatusCode: http.StatusOK, Proto: "HTTP/1.1", ProtoMajor: 1, ProtoMinor: 1,
		Header: http.Header{"Content-Type": {"text/plain"}}, Body: io.NopCloser(body), Request: r, ContentLength: -1}, nil
}

type errReader struct{ err error }

func (e errReader) Read([]byte) (int, error) { return 0, e.err }

// A forwarded stream that the tunnel cuts short ends, for troupe's api
// client (TE: trailers), with ErrStreamBroken naming the region and why;
// a client that did not ask for trailers sees the answer aborted, never a
// clean end.
func TestRegionProxyCutStreamNamesRegion(t *testing.T) {
	srv := httptest.NewServer(regionProxy("eu", &httputil.ReverseProxy{
		Rewrite:       func(pr *httputil.ProxyRequest) { pr.Out.URL.Scheme, pr.Out.URL.Host = "http", "eu.region" },
		Transport:     cutStream{},
		FlushInterval: -1,
		ErrorLog:      log.New(io.Discard, "", 0),
	}))
	defer srv.Close()

	c, err := api.NewClient(&api.Config{Address: srv.URL})
	require.NoError(t, err)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	body, err := c.Stream(ctx, "/v1/event/stream", nil)
	require.NoError(t, err)
	got, err := io.ReadAll(body)
	_ = body.Close()
	require.Equal(t, "line one\n", string(got))
	require.ErrorIs(t, err, api.ErrStreamBroken)
	require.ErrorContains(t, err, `forwarding to region "eu": `+tunnel.ErrNoAnswer.Error())

	resp, err := http.Get(srv.URL + "/v1/event/stream")
	require.NoError(t, err)
	got, err = io.ReadAll(resp.Body)
	_ = resp.Body.Close()
	require.Equal(t, "line one\n", string(got))
	require.True(t, errors.Is(err, io.ErrUnexpectedEOF), "a plain client sees the cut, not an end: %v", err)
	require.Empty(t, resp.Trailer.Get(api.StreamErrorTrailer))
}
