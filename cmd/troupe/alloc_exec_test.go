package main

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/gorilla/websocket"
	"github.com/stretchr/testify/require"
)

func TestExecURL(t *testing.T) {
	got, err := execURL("http://127.0.0.1:4646", "a1", "web", true, []string{"sh", "-c", "echo hi"})
	require.NoError(t, err)
	u, err := url.Parse(got)
	require.NoError(t, err)
	require.Equal(t, "ws", u.Scheme)
	require.Equal(t, "/v1/client/allocation/a1/exec", u.Path)
	require.Equal(t, "web", u.Query().Get("task"))
	require.Equal(t, "true", u.Query().Get("tty"))
	require.Equal(t, `["sh","-c","echo hi"]`, u.Query().Get("command"))
}

// fakeExecAgent echoes the session's stdin to stdout until stdin closes,
// then exits 3; ?task=nope is refused as the agent refuses it.
func fakeExecAgent(t *testing.T) *httptest.Server {
	up := websocket.Upgrader{}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		conn, err := up.Upgrade(w, r, nil)
		if err != nil {
			return
		}
		defer conn.Close()
		if r.URL.Query().Get("task") == "nope" {
			_ = conn.WriteMessage(websocket.CloseMessage, websocket.FormatCloseMessage(4404, `unknown task "nope"`))
			return
		}
		for {
			var in execInput
			if conn.ReadJSON(&in) != nil {
				return
			}
			if in.Stdin == nil {
				continue
			}
			if in.Stdin.Close {
				break
			}
			_ = conn.WriteJSON(map[string]any{"stdout": map[string]any{"data": in.Stdin.Data}})
		}
		_ = conn.WriteJSON(json.RawMessage(`{"stderr":{"data":"ZG9uZQ=="}}`))
		_ = conn.WriteJSON(json.RawMessage(`{"exited":true,"result":{"exit_code":3}}`))
	}))
	t.Cleanup(srv.Close)
	return srv
}

func TestExecClientSession(t *testing.T) {
	srv := fakeExecAgent(t)
	tests := []struct {
		name, task, stdin string
		wantCode          int
		wantOut, wantErr  string
	}{
		{name: "stdin and exit code", task: "t", stdin: "hello", wantCode: 3, wantOut: "hello"},
		{name: "refused", task: "nope", wantCode: -1, wantErr: `unknown task "nope"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			target, err := execURL(srv.URL, "a1", tt.task, false, []string{"cat"})
			require.NoError(t, err)
			var stdout, stderr bytes.Buffer
			s := &execClient{stdin: strings.NewReader(tt.stdin), stdout: &stdout, stderr: &stderr}
			code, err := s.run(context.Background(), target)
			require.Equal(t, tt.wantCode, code)
			if tt.wantErr != "" {
				require.ErrorContains(t, err, tt.wantErr)
				return
			}
			require.NoError(t, err)
			require.Equal(t, tt.wantOut, stdout.String())
			require.Equal(t, "done", stderr.String())
		})
	}
}

// TestExecClientSendsHeartbeats: on a quiet session (stdin open, nothing
// typed) the client sends Nomad's empty frame, {}, at its heartbeat
// interval; this fake agent ends the session after the second one.
func TestExecClientSendsHeartbeats(t *testing.T) {
	up := websocket.Upgrader{}
	beats := make(chan string, 8)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		conn, err := up.Upgrade(w, r, nil)
		if err != nil {
			return
		}
		defer conn.Close()
		for n := 0; n < 2; {
			_, data, err := conn.ReadMessage()
			if err != nil {
				return
			}
			if strings.TrimSpace(string(data)) == "{}" {
				beats <- string(data)
				n++
			}
		}
		_ = conn.WriteJSON(json.RawMessage(`{"exited":true,"result":{"exit_code":0}}`))
	}))
	defer srv.Close()
	target, err := execURL(srv.URL, "a1", "t", false, []string{"sh"})
	require.NoError(t, err)
	quiet, typing := io.Pipe() // stdin stays open and silent
	defer typing.Close()
	var stdout, stderr bytes.Buffer
	s := &execClient{stdin: quiet, stdout: &stdout, stderr: &stderr, heartbeat: 5 * time.Millisecond}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	code, err := s.run(ctx, target)
	require.NoError(t, err, "the session ended on the agent's exit frame, after two heartbeats")
	require.Zero(t, code)
	require.Len(t, beats, 2)
}
