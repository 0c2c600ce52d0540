package httpapi

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/gorilla/websocket"
	"github.com/stretchr/testify/require"

	"github.com/troupe-dev/troupe/runtime/driver"
)

// execServer serves one exec session per connection with run.
func execServer(t *testing.T, run execRun) *websocket.Conn {
	t.Helper()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		conn, err := execUpgrader.Upgrade(w, r, nil)
		if err != nil {
			return
		}
		serveExecSession(r.Context(), conn, true, []string{"x"}, run)
	}))
	t.Cleanup(srv.Close)
	conn, _, err := websocket.DefaultDialer.Dial("ws"+strings.TrimPrefix(srv.URL, "http"), nil)
	require.NoError(t, err)
	t.Cleanup(func() { conn.Close() })
	_ = conn.SetReadDeadline(time.Now().Add(10 * time.Second))
	return conn
}

func TestExecFramingWireShapes(t *testing.T) {
	tests := []struct {
		name string
		v    any
		want string
	}{
		{"stdin", execInput{Stdin: &execIO{Data: []byte("hi")}}, `{"stdin":{"data":"aGk="}}`},
		{"stdin close", execInput{Stdin: &execIO{Close: true}}, `{"stdin":{"close":true}}`},
		{"tty size", execInput{TTYSize: &execTTYSize{Height: 24, Width: 80}}, `{"tty_size":{"height":24,"width":80}}`},
		{"heartbeat", execInput{}, `{}`},
		{"stdout", execOutput{Stdout: &execIO{Data: []byte("hi")}}, `{"stdout":{"data":"aGk="}}`},
		{"stderr", execOutput{Stderr: &execIO{Data: []byte("hi")}}, `{"stderr":{"data":"aGk="}}`},
		{"exited", execOutput{Exited: true, Result: &execResult{}}, `{"exited":true,"result":{"exit_code":0}}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			b, err := json.Marshal(tt.v)
			require.NoError(t, err)
			require.JSONEq(t, tt.want, string(b))
		})
	}
}

func TestExecSessionStreams(t *testing.T) {
	conn := execServer(t, func(ctx context.Context, o *driver.ExecOptions) (int, error) {
		sz := <-o.Resize
		in, err := io.ReadAll(o.Stdin)
		if err != nil {
			return -1, err
		}
		fmt.Fprintf(o.Stdout, "%dx%d %s", sz.Width, sz.Height, in)
		fmt.Fprint(o.Stderr, "warn")
		return 7, nil
	})
	for _, in := range []string{`{}`, `{"tty_size":{"height":24,"width":80}}`,
		`{"stdin":{"data":"aGk="}}`, `{"stdin":{"data":"IQ=="}}`, `{"stdin":{"close":true}}`} {
		require.NoError(t, conn.WriteMessage(websocket.TextMessage, []byte(in)))
	}
	var got []string
	for range 3 {
		_, b, err := conn.ReadMessage()
		require.NoError(t, err)
		got = append(got, string(b))
	}
	require.JSONEq(t, `{"stdout":{"data":"`+b64("80x24 hi!")+`"}}`, got[0])
	require.JSONEq(t, `{"stderr":{"data":"`+b64("warn")+`"}}`, got[1])
	require.JSONEq(t, `{"exited":true,"result":{"exit_code":7}}`, got[2])
	_, _, err := conn.ReadMessage()
	require.True(t, websocket.IsCloseError(err, websocket.CloseNormalClosure), "got %v", err)
}

func TestExecSessionErrorIsCloseFrame(t *testing.T) {
	conn := execServer(t, func(context.Context, *driver.ExecOptions) (int, error) {
		return -1, fmt.Errorf("%w: gone", driver.ErrTaskNotFound)
	})
	_, _, err := conn.ReadMessage()
	var ce *websocket.CloseError
	require.ErrorAs(t, err, &ce)
	require.Equal(t, execCloseBase+http.StatusNotFound, ce.Code)
	require.Contains(t, ce.Text, "gone")
}

func TestExecSessionClientGoneCancels(t *testing.T) {
	cancelled := make(chan struct{})
	conn := execServer(t, func(ctx context.Context, o *driver.ExecOptions) (int, error) {
		<-ctx.Done()
		close(cancelled)
		return -1, ctx.Err()
	})
	require.NoError(t, conn.Close())
	select {
	case <-cancelled:
	case <-time.After(10 * time.Second):
		t.Fatal("the command was not cancelled when the client went away")
	}
}

func TestExecCommandParam(t *testing.T) {
	tests := []struct {
		raw     string
		want    []string
		wantErr string
	}{
		{raw: `["echo","hi"]`, want: []string{"echo", "hi"}},
		{raw: "", wantErr: "command is required"},
		{raw: `echo hi`, wantErr: "not a JSON list"},
		{raw: `[]`, wantErr: "must name a program"},
		{raw: `[""]`, wantErr: "must name a program"},
	}
	for _, tt := range tests {
		t.Run(tt.raw, func(t *testing.T) {
			got, err := execCommand(tt.raw)
			if tt.wantErr != "" {
				require.ErrorContains(t, err, tt.wantErr)
				return
			}
			require.NoError(t, err)
			require.Equal(t, tt.want, got)
		})
	}
}

func b64(s string) string {
	b, _ := json.Marshal([]byte(s))
	return strings.Trim(string(b), `"`)
}
