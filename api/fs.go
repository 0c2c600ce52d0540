package api

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"mime"
	"net/http"
	"strconv"
)

// Log stream origins.
const (
	OriginStart = "start"
	OriginEnd   = "end"
)

// AllocFS is the /v1/client/fs family.
type AllocFS struct{ c *Client }

// AllocFS returns the allocation file-system endpoints.
func (c *Client) AllocFS() *AllocFS { return &AllocFS{c: c} }

// Logs streams a task's stdout or stderr (GET /v1/client/fs/logs/:alloc).
// It asks for plain text; should the server answer with JSON frames
// instead, they are decoded, so the reader always yields the log bytes.
// origin is "start" or "end" ("" means start) and offset counts bytes from
// it. With follow the stream lasts until ctx is done or the server ends it
// (one the server cut short ends with ErrStreamBroken). The caller closes
// the reader.
func (a *AllocFS) Logs(ctx context.Context, allocID, task, logType string, follow bool, origin string, offset int64) (io.ReadCloser, error) {
	if origin == "" {
		origin = OriginStart
	}
	r := a.c.newRequest(http.MethodGet, "/v1/client/fs/logs/"+escape(allocID))
	r.ctx = ctx
	r.params.Set("task", task)
	r.params.Set("type", logType)
	r.params.Set("follow", strconv.FormatBool(follow))
	r.params.Set("plain", "true")
	r.params.Set("origin", origin)
	r.params.Set("offset", strconv.FormatInt(offset, 10))
	r.askTrailers()
	resp, err := a.c.do(r)
	if err != nil {
		return nil, err
	}
	body := trailerBody{resp}
	if !isJSON(resp.Header.Get("Content-Type")) {
		return body, nil
	}
	return &frameReader{dec: json.NewDecoder(body), body: body}, nil
}

func isJSON(contentType string) bool {
	mt, _, err := mime.ParseMediaType(contentType)
	return err == nil && mt == "application/json"
}

// frameReader turns a sequence of JSON StreamFrames into their data.
type frameReader struct {
	dec  *json.Decoder
	body io.Closer
	buf  []byte
}

func (f *frameReader) Read(p []byte) (int, error) {
	for len(f.buf) == 0 {
		var fr StreamFrame
		if err := f.dec.Decode(&fr); err != nil {
			if errors.Is(err, io.EOF) || errors.Is(err, ErrStreamBroken) {
				return 0, err
			}
			return 0, fmt.Errorf("%w: log frame: %v", ErrDecode, err)
		}
		f.buf = fr.Data
	}
	n := copy(p, f.buf)
	f.buf = f.buf[n:]
	return n, nil
}

func (f *frameReader) Close() error { return f.body.Close() }
