package httpapi

import (
	"bytes"
	"io"
	"net/http"

	"github.com/troupe-dev/troupe/messages"
	"github.com/troupe-dev/troupe/runtime/safepath"
)

// allocSignalRequest is Nomad's AllocSignalRequest.
type allocSignalRequest struct {
	Task   string
	Signal string
}

// allocRestartRequest is Nomad's AllocRestartRequest.
type allocRestartRequest struct {
	TaskName string
	AllTasks bool
}

// genericResponse is Nomad's GenericResponse: a write without an index.
type genericResponse struct {
	Index uint64
}

// allocSignal handles POST (or PUT) /v1/client/allocation/:alloc/signal:
// the allocation's actor sends Signal to Task (every running task when
// Task is empty; SIGKILL when Signal is). An allocation another client
// runs is passed to that client's agent, as logs are.
func (s *Server) allocSignal(w http.ResponseWriter, r *http.Request) (any, error) {
	a, job, err := s.allocOpTarget(w, r)
	if err != nil {
		return nil, err
	}
	id := a.GetID()
	var req allocSignalRequest
	if err := decodeOptionalBody(r, &req); err != nil {
		return nil, err
	}
	if err := checkOpTask(a, job, req.Task); err != nil {
		return nil, err
	}
	return s.allocOp(r, id, &messages.SignalAlloc{Task: req.Task, Signal: req.Signal})
}

// allocRestart handles POST (or PUT) /v1/client/allocation/:alloc/restart:
// the allocation's actor restarts TaskName in place (every running task
// when it is empty; every task with AllTasks, also those that already
// finished, as Nomad's -all-tasks), which its
// restart policy does not count.
func (s *Server) allocRestart(w http.ResponseWriter, r *http.Request) (any, error) {
	a, job, err := s.allocOpTarget(w, r)
	if err != nil {
		return nil, err
	}
	id := a.GetID()
	var req allocRestartRequest
	if err := decodeOptionalBody(r, &req); err != nil {
		return nil, err
	}
	if req.AllTasks && req.TaskName != "" {
		return nil, codeErr(http.StatusBadRequest, "a task name and AllTasks exclude each other")
	}
	if err := checkOpTask(a, job, req.TaskName); err != nil {
		return nil, err
	}
	return s.allocOp(r, id, &messages.RestartAlloc{Task: req.TaskName, AllTasks: req.AllTasks})
}

// allocOpTarget finds the allocation of the path and its job: unknown is
// a 404; one another client runs is proxied to its agent (errProxied).
func (s *Server) allocOpTarget(w http.ResponseWriter, r *http.Request) (*messages.Allocation, *messages.Job, error) {
	a, job, elsewhere, err := s.b.AllocForLogs(r.PathValue("alloc"))
	if err != nil {
		return nil, nil, codeErr(http.StatusNotFound, "%v", err)
	}
	if elsewhere != "" {
		ProxyTo(elsewhere).ServeHTTP(w, r)
		return nil, nil, errProxied
	}
	return a, job, nil
}

// checkOpTask refuses a task the allocation does not have (404).
func checkOpTask(a *messages.Allocation, job *messages.Job, task string) error {
	if task != "" && !hasTask(job, a.GetTaskGroup(), task) {
		return codeErr(http.StatusNotFound, "unknown task %s in allocation %q", safepath.Quote(task), a.GetID())
	}
	return nil
}

// allocOp hands the request to the allocation's actor on this client; a
// refusal becomes the status of its code (errStatus, else 500).
func (s *Server) allocOp(r *http.Request, id string, req any) (any, error) {
	resp, err := s.b.AllocOp(r.Context(), id, req)
	if err != nil {
		return nil, codeErr(http.StatusServiceUnavailable, "allocation %q: no answer from its actor: %v", id, err)
	}
	if e := resp.GetError(); e != nil {
		code, ok := errStatus[e.ErrorCode()]
		if !ok {
			code = http.StatusInternalServerError
		}
		return nil, codeErr(code, "allocation %q: %s", id, e.GetMessage())
	}
	return &genericResponse{}, nil
}

// decodeOptionalBody is decodeBody where an empty body means the zero
// request.
func decodeOptionalBody(r *http.Request, v any) error {
	body, err := io.ReadAll(r.Body)
	if err != nil {
		return err
	}
	if len(bytes.TrimSpace(body)) == 0 {
		return nil
	}
	r.Body = io.NopCloser(bytes.NewReader(body))
	return decodeBody(r, v)
}
