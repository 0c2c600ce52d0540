package api

import "net/http"

// AllocSignalRequest is the body of an allocation's signal (Nomad's).
type AllocSignalRequest struct {
	Task   string
	Signal string
}

// AllocRestartRequest is the body of an allocation's restart (Nomad's).
type AllocRestartRequest struct {
	TaskName string
	AllTasks bool
}

// Signal sends signal to task of the allocation (every running task when
// task is empty; SIGKILL when signal is) through the agent of the client
// that runs it (POST /v1/client/allocation/:id/signal).
func (a *Allocations) Signal(id, task, signal string, w *WriteOptions) error {
	_, err := a.c.write(http.MethodPost, "/v1/client/allocation/"+escape(id)+"/signal",
		&AllocSignalRequest{Task: task, Signal: signal}, nil, w)
	return err
}

// Restart restarts task of the allocation in place (every running task
// when task is empty; every task with allTasks), counted by no restart
// policy (POST /v1/client/allocation/:id/restart).
func (a *Allocations) Restart(id, task string, allTasks bool, w *WriteOptions) error {
	_, err := a.c.write(http.MethodPost, "/v1/client/allocation/"+escape(id)+"/restart",
		&AllocRestartRequest{TaskName: task, AllTasks: allTasks}, nil, w)
	return err
}
