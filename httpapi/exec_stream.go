package httpapi

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"sync"
	"time"

	"github.com/gorilla/websocket"

	"github.com/troupe-dev/troupe/runtime/driver"
)

// The JSON frames of an exec session, as Nomad's API speaks them over its
// websocket: the client sends execInput, the agent execOutput.
type (
	execInput struct {
		Stdin   *execIO      `json:"stdin,omitempty"`
		TTYSize *execTTYSize `json:"tty_size,omitempty"`
	}
	// execIO is a chunk of a stream (Data, base64 in JSON) or its end.
	execIO struct {
		Data  []byte `json:"data,omitempty"`
		Close bool   `json:"close,omitempty"`
	}
	execTTYSize struct {
		Height int `json:"height,omitempty"`
		Width  int `json:"width,omitempty"`
	}
	execOutput struct {
		Stdout *execIO     `json:"stdout,omitempty"`
		Stderr *execIO     `json:"stderr,omitempty"`
		Exited bool        `json:"exited,omitempty"`
		Result *execResult `json:"result,omitempty"`
	}
	execResult struct {
		ExitCode int `json:"exit_code"`
	}
)

const (
	// execReadLimit bounds one frame from the client.
	execReadLimit = 1 << 20
	// execWriteWait bounds writing one frame to the client.
	execWriteWait = 10 * time.Second
	// execCloseBase + an HTTP status is the close code of a session that
	// failed (4404: unknown task); the close text says why.
	execCloseBase = 4000
	// maxCloseText is what fits in a close frame after its code.
	maxCloseText = 123
)

// execUpgrader upgrades exec requests; its default origin check refuses
// a browser page of another site.
var execUpgrader = websocket.Upgrader{ReadBufferSize: 4096, WriteBufferSize: 4096}

// execRun runs one command with the session's streams.
type execRun func(ctx context.Context, opts *driver.ExecOptions) (int, error)

// execConn serialises the frames written to one websocket.
type execConn struct {
	mu   sync.Mutex
	conn *websocket.Conn
}

func (c *execConn) send(v *execOutput) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	_ = c.conn.SetWriteDeadline(time.Now().Add(execWriteWait))
	return c.conn.WriteJSON(v)
}

// closeWith ends the session with a close frame of code and text.
func (c *execConn) closeWith(code int, text string) {
	if len(text) > maxCloseText {
		text = text[:maxCloseText]
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	_ = c.conn.WriteControl(websocket.CloseMessage, websocket.FormatCloseMessage(code, text),
		time.Now().Add(execWriteWait))
}

// execStream is an io.Writer that frames what is written as stdout or
// stderr.
type execStream struct {
	c      *execConn
	stderr bool
}

func (s execStream) Write(p []byte) (int, error) {
	op := &execIO{Data: p}
	out := &execOutput{Stdout: op}
	if s.stderr {
		out = &execOutput{Stderr: op}
	}
	if err := s.c.send(out); err != nil {
		return 0, err
	}
	return len(p), nil
}

// serveExecSession runs one command over conn: the client's stdin and
// terminal sizes feed it, its output goes back as frames, and its exit
// code ends the session. A client that goes away kills the command. Like
// Nomad's agent, it sends nothing on a quiet session: the client's
// heartbeats ({} every 10 s from Nomad's client and troupe's) keep it open.
func serveExecSession(ctx context.Context, conn *websocket.Conn, tty bool, command []string, run execRun) {
	defer conn.Close()
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	c := &execConn{conn: conn}
	stdinR, stdinW := io.Pipe()
	sizes := make(chan driver.TerminalSize, 1)
	readerDone := make(chan struct{})
	go func() {
		defer close(readerDone)
		readExecInput(conn, stdinW, sizes)
		cancel() // the client is gone: so is the command
	}()
	opts := &driver.ExecOptions{Command: command, Tty: tty, Stdin: stdinR,
		Stdout: execStream{c: c}, Stderr: execStream{c: c, stderr: true}, Resize: sizes}
	code, err := run(ctx, opts)
	_ = stdinR.Close()
	if err != nil {
		c.closeWith(execCloseBase+execErrorCode(err), err.Error())
	} else if c.send(&execOutput{Exited: true, Result: &execResult{ExitCode: code}}) == nil {
		c.closeWith(websocket.CloseNormalClosure, "")
	}
	_ = conn.Close() // ends the reader
	<-readerDone
}

// readExecInput decodes the client's frames until the connection ends:
// stdin goes to stdin (close: EOF), sizes to sizes (the newest wins), and
// an empty frame is a heartbeat.
func readExecInput(conn *websocket.Conn, stdin *io.PipeWriter, sizes chan driver.TerminalSize) {
	conn.SetReadLimit(execReadLimit)
	defer stdin.Close()
	for {
		_, data, err := conn.ReadMessage()
		if err != nil {
			return
		}
		var in execInput
		if err := json.Unmarshal(data, &in); err != nil {
			return
		}
		if in.TTYSize != nil {
			sz := driver.TerminalSize{Height: in.TTYSize.Height, Width: in.TTYSize.Width}
			select {
			case <-sizes: // drop a size not applied yet
			default:
			}
			sizes <- sz
		}
		if in.Stdin == nil {
			continue
		}
		if len(in.Stdin.Data) > 0 {
			if _, err := stdin.Write(in.Stdin.Data); err != nil {
				// The command stopped reading; keep reading frames.
				continue
			}
		}
		if in.Stdin.Close {
			_ = stdin.Close()
		}
	}
}

// execErrorCode is the HTTP status that stands for an exec's failure.
func execErrorCode(err error) int {
	var he *HTTPError
	switch {
	case errors.As(err, &he):
		return he.Code
	case errors.Is(err, driver.ErrTaskNotFound):
		return http.StatusNotFound
	case errors.Is(err, driver.ErrExecNotSupported), errors.Is(err, driver.ErrNotSupported),
		errors.Is(err, driver.ErrInvalidConfig):
		return http.StatusBadRequest
	}
	return http.StatusInternalServerError
}
