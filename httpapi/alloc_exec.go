package httpapi

import (
	"context"
	"encoding/json"
	"net/http"

	"github.com/gorilla/websocket"

	"github.com/troupe-dev/troupe/runtime/driver"
	"github.com/troupe-dev/troupe/runtime/safepath"
)

// ExecBackend is a Backend whose client can run commands in the tasks of
// its allocations; without it, exec is a 501.
type ExecBackend interface {
	// ExecTask runs opts.Command in task of allocation allocID, which this
	// client runs, and returns its exit code. A driver that cannot is a
	// wrapped driver.ErrExecNotSupported, a task that does not run a
	// wrapped driver.ErrTaskNotFound.
	ExecTask(ctx context.Context, allocID, task string, opts *driver.ExecOptions) (int, error)
}

// allocExec handles GET /v1/client/allocation/:alloc/exec?task=&command=
// ["..."]&tty=: a websocket session, in Nomad's framing, that runs the
// command in the task. An allocation another client runs is passed to
// that client's agent (the proxy carries the upgrade). A request that is
// refused before the session starts gets an HTTP error, or, when it asks
// for a websocket, a close frame whose code is 4000+status and whose text
// says why (what Nomad's client reports).
func (s *Server) allocExec(w http.ResponseWriter, r *http.Request) {
	allocID := r.PathValue("alloc")
	a, job, elsewhere, err := s.b.AllocForLogs(allocID)
	if err != nil {
		s.refuseExec(w, r, codeErr(http.StatusNotFound, "%v", err))
		return
	}
	if elsewhere != "" {
		ProxyTo(elsewhere).ServeHTTP(w, r)
		return
	}
	q := r.URL.Query()
	task := q.Get("task")
	if task == "" {
		if task = onlyTask(job, a.GetTaskGroup()); task == "" {
			s.refuseExec(w, r, codeErr(http.StatusBadRequest, "task is required: allocation %q has several tasks", allocID))
			return
		}
	}
	if !hasTask(job, a.GetTaskGroup(), task) {
		s.refuseExec(w, r, codeErr(http.StatusNotFound, "unknown task %s in allocation %q", safepath.Quote(task), allocID))
		return
	}
	command, err := execCommand(q.Get("command"))
	if err != nil {
		s.refuseExec(w, r, err)
		return
	}
	eb, ok := s.b.(ExecBackend)
	if !ok {
		s.refuseExec(w, r, codeErr(http.StatusNotImplemented, "this agent cannot run commands in tasks"))
		return
	}
	if !websocket.IsWebSocketUpgrade(r) {
		s.writeError(w, r, codeErr(http.StatusBadRequest, "exec is a websocket session: ask for an upgrade"))
		return
	}
	conn, err := execUpgrader.Upgrade(w, r, nil)
	if err != nil {
		return // the upgrader answered the client
	}
	id := a.GetID()
	serveExecSession(r.Context(), conn, boolParam(r, "tty"), command,
		func(ctx context.Context, opts *driver.ExecOptions) (int, error) {
			return eb.ExecTask(ctx, id, task, opts)
		})
}

// execCommand decodes ?command=, a JSON list of strings, the first not
// empty.
func execCommand(raw string) ([]string, error) {
	if raw == "" {
		return nil, codeErr(http.StatusBadRequest, `command is required: a JSON list such as ["sh","-c","echo hi"]`)
	}
	var cmd []string
	if err := json.Unmarshal([]byte(raw), &cmd); err != nil {
		return nil, codeErr(http.StatusBadRequest, "command %q is not a JSON list of strings: %v", raw, err)
	}
	if len(cmd) == 0 || cmd[0] == "" {
		return nil, codeErr(http.StatusBadRequest, "command must name a program")
	}
	return cmd, nil
}

// refuseExec answers a refused exec: a websocket client gets the refusal
// as the session's close frame, any other an HTTP error.
func (s *Server) refuseExec(w http.ResponseWriter, r *http.Request, err error) {
	if !websocket.IsWebSocketUpgrade(r) {
		s.writeError(w, r, err)
		return
	}
	conn, uerr := execUpgrader.Upgrade(w, r, nil)
	if uerr != nil {
		return
	}
	defer conn.Close()
	(&execConn{conn: conn}).closeWith(execCloseBase+execErrorCode(err), err.Error())
}
