package main

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"

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
