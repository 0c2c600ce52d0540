package api

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"strconv"
	"time"
)

// AllocFileInfo is one entry of an allocation dir (Nomad's shape).
type AllocFileInfo struct {
	Name        string
	IsDir       bool
	Size        int64
	FileMode    string
	ModTime     time.Time
	ContentType string `json:",omitempty"`
}

// List lists the directory path of the allocation dir
// (GET /v1/client/fs/ls/:alloc).
func (a *AllocFS) List(ctx context.Context, allocID, path string) ([]*AllocFileInfo, error) {
	var out []*AllocFileInfo
	return out, a.getJSON(ctx, "ls", allocID, path, &out)
}

// Stat describes path in the allocation dir (GET /v1/client/fs/stat/:alloc).
func (a *AllocFS) Stat(ctx context.Context, allocID, path string) (*AllocFileInfo, error) {
	var out AllocFileInfo
	if err := a.getJSON(ctx, "stat", allocID, path, &out); err != nil {
		return nil, err
	}
	return &out, nil
}

func (a *AllocFS) getJSON(ctx context.Context, op, allocID, path string, out any) error {
	rc, err := a.raw(ctx, op, allocID, map[string]string{"path": path})
	if err != nil {
		return err
	}
	defer rc.Close()
	return decodeBody(rc, out)
}

// Cat reads the file path of the allocation dir (GET /v1/client/fs/cat/:alloc).
// The caller closes the reader.
func (a *AllocFS) Cat(ctx context.Context, allocID, path string) (io.ReadCloser, error) {
	return a.raw(ctx, "cat", allocID, map[string]string{"path": path})
}

// ReadAt reads limit bytes (all, when limit <= 0) of path from offset
// (GET /v1/client/fs/readat/:alloc).
func (a *AllocFS) ReadAt(ctx context.Context, allocID, path string, offset, limit int64) (io.ReadCloser, error) {
	return a.raw(ctx, "readat", allocID, map[string]string{"path": path,
		"offset": strconv.FormatInt(offset, 10), "limit": strconv.FormatInt(limit, 10)})
}

// Stream streams path from offset counted from origin ("" is start),
// following it with follow until ctx is done (GET /v1/client/fs/stream/:alloc).
// The reader yields the file's bytes.
func (a *AllocFS) Stream(ctx context.Context, allocID, path, origin string, offset int64, follow bool) (io.ReadCloser, error) {
	if origin == "" {
		origin = OriginStart
	}
	rc, err := a.raw(ctx, "stream", allocID, map[string]string{"path": path, "origin": origin,
		"offset": strconv.FormatInt(offset, 10), "follow": strconv.FormatBool(follow)})
	if err != nil {
		return nil, err
	}
	return &frameReader{dec: json.NewDecoder(rc), body: rc}, nil
}

func (a *AllocFS) raw(ctx context.Context, op, allocID string, params map[string]string) (io.ReadCloser, error) {
	r := a.c.newRequest(http.MethodGet, "/v1/client/fs/"+op+"/"+escape(allocID))
	r.ctx = ctx
	for k, v := range params {
		r.params.Set(k, v)
	}
	resp, err := a.c.do(r)
	if err != nil {
		return nil, err
	}
	return resp.Body, nil
}
