package main

import (
	"context"
	"crypto/tls"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"os/signal"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/gorilla/websocket"
	"golang.org/x/term"

	"github.com/troupe-dev/troupe/api"
)

// The exec session's frames (Nomad's websocket framing).
type (
	execInput struct {
		Stdin   *execIO      `json:"stdin,omitempty"`
		TTYSize *execTTYSize `json:"tty_size,omitempty"`
	}
	execIO struct {
		Data  []byte `json:"data,omitempty"`
		Close bool   `json:"close,omitempty"`
	}
	execTTYSize struct {
		Height int `json:"height,omitempty"`
		Width  int `json:"width,omitempty"`
	}
	execOutput struct {
		Stdout *execIO `json:"stdout,omitempty"`
		Stderr *execIO `json:"stderr,omitempty"`
		Exited bool    `json:"exited,omitempty"`
		Result *struct {
			ExitCode int `json:"exit_code"`
		} `json:"result,omitempty"`
	}
)

// allocExecCommand is `troupe alloc exec [-i] [-t] [-task T] ID CMD...`.
func allocExecCommand(args []string, stdout, stderr io.Writer) int {
	return allocExec(args, os.Stdin, stdout, stderr)
}

// allocExec is allocExecCommand with its stdin; it exits with the
// command's exit code.
func allocExec(args []string, stdin *os.File, stdout, stderr io.Writer) int {
	m := newMeta("alloc exec", stdout, stderr, false)
	interactive := m.fs.Bool("i", false, "pass stdin to the command")
	tty := m.fs.Bool("t", false, "run the command on a pseudo-terminal (raw mode when stdin is a terminal)")
	taskName := m.fs.String("task", "", "the task to run in (default: the allocation's only task)")
	rest, code, ok := m.parse(args)
	if !ok {
		return code
	}
	if len(rest) < 2 {
		return m.usageError("ID CMD...")
	}
	c, alloc, code, ok := m.allocClient(rest[0])
	if !ok {
		return code
	}
	var named []string
	if *taskName != "" {
		named = []string{*taskName}
	}
	task, err := pickTask(alloc, named)
	if err != nil {
		return m.fail("choosing the task", err)
	}
	target, err := execURL(c.Address(), alloc.ID, task, *tty, rest[1:])
	if err != nil {
		return m.fail("building the exec URL", err)
	}
	if region := m.regionOf(); region != "" { // the agent forwards the session to that region
		target += "&region=" + url.QueryEscape(region)
	}
	_, tlsConf, err := m.httpClient()
	if err != nil {
		return m.fail("reading the TLS settings", err)
	}
	s := &execClient{stdout: stdout, stderr: stderr, tls: tlsConf, token: m.tokenOf()}
	if *interactive {
		s.stdin = stdin
	}
	if *tty && stdin != nil && term.IsTerminal(int(stdin.Fd())) {
		old, err := term.MakeRaw(int(stdin.Fd()))
		if err != nil {
			return m.fail("making the terminal raw", err)
		}
		defer func() { _ = term.Restore(int(stdin.Fd()), old) }()
		s.resize = stdin
	}
	exit, err := s.run(context.Background(), target)
	if err != nil {
		return m.fail("running the command", err)
	}
	return exit
}

// execURL is the websocket address of an exec session.
func execURL(addr, allocID, task string, tty bool, command []string) (string, error) {
	u, err := url.Parse(addr)
	if err != nil {
		return "", err
	}
	switch u.Scheme {
	case "https":
		u.Scheme = "wss"
	default:
		u.Scheme = "ws"
	}
	cmd, err := json.Marshal(command)
	if err != nil {
		return "", err
	}
	u.Path = "/v1/client/allocation/" + url.PathEscape(allocID) + "/exec"
	u.RawQuery = url.Values{"task": {task}, "tty": {strconv.FormatBool(tty)}, "command": {string(cmd)}}.Encode()
	return u.String(), nil
}

// execHeartbeat is how often the client sends an empty frame, {}, on an
// exec session (Nomad's client sends one every 10 s; the agent sends
// nothing on a quiet session, as Nomad's does), so that proxies between
// them keep a quiet session open.
const execHeartbeat = 10 * time.Second

// execClient is one exec session's client side.
type execClient struct {
	stdin          io.Reader // nil: no input
	stdout, stderr io.Writer
	resize         *os.File      // a terminal whose size (and SIGWINCH) is sent
	heartbeat      time.Duration // between empty frames (0: execHeartbeat)
	tls            *tls.Config   // nil: Go's defaults (wss:// to a public certificate)
	token          string        // the ACL token's secret ("": none)
	mu             sync.Mutex
	conn           *websocket.Conn
}

func (s *execClient) send(v *execInput) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.conn.WriteJSON(v)
}

// run connects, feeds the session and returns the command's exit code.
func (s *execClient) run(ctx context.Context, target string) (int, error) {
	dialer := *websocket.DefaultDialer
	dialer.TLSClientConfig = s.tls
	var header http.Header
	if s.token != "" {
		header = http.Header{api.TokenHeader: {s.token}}
	}
	conn, resp, err := dialer.DialContext(ctx, target, header)
	if err != nil {
		if resp != nil {
			body, _ := io.ReadAll(io.LimitReader(resp.Body, 4096))
			resp.Body.Close()
			return -1, fmt.Errorf("%s: %s", resp.Status, strings.TrimSpace(string(body)))
		}
		return -1, err
	}
	defer conn.Close()
	s.conn = conn
	if s.resize != nil {
		stop := s.watchSize()
		defer stop()
	}
	go s.pumpStdin()
	stopBeats := s.beat()
	defer stopBeats()
	for {
		var out execOutput
		_, data, err := conn.ReadMessage()
		var ce *websocket.CloseError
		if errors.As(err, &ce) && ce.Text != "" {
			return -1, errors.New(ce.Text)
		}
		if err != nil {
			return -1, fmt.Errorf("the session ended before the command's exit code came: %w", err)
		}
		if err := json.Unmarshal(data, &out); err != nil {
			return -1, fmt.Errorf("bad frame from the agent: %w", err)
		}
		switch {
		case out.Stdout != nil:
			_, _ = s.stdout.Write(out.Stdout.Data)
		case out.Stderr != nil:
			_, _ = s.stderr.Write(out.Stderr.Data)
		case out.Exited && out.Result != nil:
			return out.Result.ExitCode, nil
		}
	}
}

// pumpStdin sends stdin as frames, then its end; no stdin ends at once.
// It stops when a send fails (the session is over).
func (s *execClient) pumpStdin() {
	if s.stdin != nil {
		buf := make([]byte, 4096)
		for {
			n, err := s.stdin.Read(buf)
			if n > 0 && s.send(&execInput{Stdin: &execIO{Data: buf[:n]}}) != nil {
				return
			}
			if err != nil {
				break
			}
		}
	}
	_ = s.send(&execInput{Stdin: &execIO{Close: true}})
}

// beat sends an empty frame every heartbeat interval until the returned
// stop is called (or a send fails: the session is over).
func (s *execClient) beat() (stop func()) {
	every := s.heartbeat
	if every <= 0 {
		every = execHeartbeat
	}
	done := make(chan struct{})
	go func() {
		t := time.NewTicker(every)
		defer t.Stop()
		for {
			select {
			case <-done:
				return
			case <-t.C:
				if s.send(&execInput{}) != nil {
					return
				}
			}
		}
	}()
	return func() { close(done) }
}

// watchSize sends the terminal's size now and on every SIGWINCH until the
// returned stop is called.
func (s *execClient) watchSize() (stop func()) {
	winch := make(chan os.Signal, 1)
	signal.Notify(winch, syscall.SIGWINCH)
	done := make(chan struct{})
	sendSize := func() {
		if w, h, err := term.GetSize(int(s.resize.Fd())); err == nil {
			_ = s.send(&execInput{TTYSize: &execTTYSize{Height: h, Width: w}})
		}
	}
	sendSize()
	go func() {
		for {
			select {
			case <-done:
				return
			case <-winch:
				sendSize()
			}
		}
	}()
	return func() { signal.Stop(winch); close(done) }
}
