package hostpath

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"time"

	"google.golang.org/grpc/codes"
)

// Control is a client of a plugin's control API (Plugin.StartControl),
// for tests that drive a plugin running in another process.
type Control struct {
	hc *http.Client
}

// NewControl returns a client for the control socket at socketPath
// ("/path/ctl.sock" or "unix:///path/ctl.sock"). It does not connect yet.
func NewControl(socketPath string) *Control {
	path := strings.TrimPrefix(strings.TrimPrefix(socketPath, "unix://"), "unix:")
	return &Control{hc: &http.Client{Transport: &http.Transport{
		DialContext: func(ctx context.Context, _, _ string) (net.Conn, error) {
			var d net.Dialer
			return d.DialContext(ctx, "unix", path)
		},
	}}}
}

// FailNext makes the next times calls of method (for volumeID, or any when
// empty) answer code; see Plugin.FailNextVolume.
func (c *Control) FailNext(ctx context.Context, method, volumeID string, code codes.Code, times int) error {
	return c.post(ctx, "/v1/fail", ControlRequest{Method: method, VolumeID: volumeID, Code: code.String(), Times: times})
}

// SetLatency sets a method's latency; see Plugin.SetLatency.
func (c *Control) SetLatency(ctx context.Context, method string, d time.Duration) error {
	return c.post(ctx, "/v1/latency", ControlRequest{Method: method, Latency: d.String()})
}

// Hang blocks calls of method for volumeID; see Plugin.Hang.
func (c *Control) Hang(ctx context.Context, method, volumeID string) error {
	return c.post(ctx, "/v1/hang", ControlRequest{Method: method, VolumeID: volumeID})
}

// Release undoes Hang.
func (c *Control) Release(ctx context.Context, method, volumeID string) error {
	return c.post(ctx, "/v1/release", ControlRequest{Method: method, VolumeID: volumeID})
}

// SetRaceMode turns device-name race mode on or off.
func (c *Control) SetRaceMode(ctx context.Context, on bool) error {
	return c.post(ctx, "/v1/race", ControlRequest{On: on})
}

// Reset drops every fault; see Plugin.ResetFaults.
func (c *Control) Reset(ctx context.Context) error {
	return c.post(ctx, "/v1/reset", ControlRequest{})
}

// Calls returns the plugin's call records.
func (c *Control) Calls(ctx context.Context) ([]Call, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, "http://hostpath/v1/calls", nil)
	if err != nil {
		return nil, err
	}
	resp, err := c.hc.Do(req)
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrControl, err)
	}
	defer resp.Body.Close()
	var calls []Call
	if err := json.NewDecoder(resp.Body).Decode(&calls); err != nil {
		return nil, fmt.Errorf("%w: calls: %w", ErrControl, err)
	}
	return calls, nil
}

func (c *Control) post(ctx context.Context, path string, body ControlRequest) error {
	b, err := json.Marshal(body)
	if err != nil {
		return err
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, "http://hostpath"+path, bytes.NewReader(b))
	if err != nil {
		return err
	}
	resp, err := c.hc.Do(req)
	if err != nil {
		return fmt.Errorf("%w: %w", ErrControl, err)
	}
	defer resp.Body.Close()
	if resp.StatusCode >= 300 {
		msg, _ := io.ReadAll(io.LimitReader(resp.Body, 4096))
		return fmt.Errorf("%w: %s: %s", ErrControl, path, strings.TrimSpace(string(msg)))
	}
	return nil
}
