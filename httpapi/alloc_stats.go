package httpapi

import (
	"context"
	"errors"
	"net/http"

	"github.com/troupe-dev/troupe/api"
	"github.com/troupe-dev/troupe/runtime/driver"
	"github.com/troupe-dev/troupe/runtime/safepath"
)

// StatsBackend is a Backend whose client reports the resource usage of
// its allocations' tasks; without it, allocation stats are a 501.
type StatsBackend interface {
	// AllocStats samples the running tasks of allocation allocID (task
	// "": all), which this client runs; a task that is not running is a
	// wrapped driver.ErrTaskNotFound.
	AllocStats(ctx context.Context, allocID, task string) (*api.AllocResourceUsage, error)
}

// allocStats handles GET /v1/client/allocation/:alloc/stats[?task=]: the
// usage of the allocation's tasks in Nomad's AllocResourceUsage. An
// allocation another client runs is passed to that client's agent.
func (s *Server) allocStats(w http.ResponseWriter, r *http.Request) (any, error) {
	a, job, err := s.allocOpTarget(w, r)
	if err != nil {
		return nil, err
	}
	task := r.URL.Query().Get("task")
	if task != "" && !hasTask(job, a.GetTaskGroup(), task) {
		return nil, codeErr(http.StatusNotFound, "unknown task %s in allocation %q", safepath.Quote(task), a.GetID())
	}
	sb, ok := s.b.(StatsBackend)
	if !ok {
		return nil, codeErr(http.StatusNotImplemented, "this agent does not report resource usage")
	}
	out, err := sb.AllocStats(r.Context(), a.GetID(), task)
	if errors.Is(err, driver.ErrTaskNotFound) {
		return nil, codeErr(http.StatusNotFound, "%v", err)
	}
	return out, err
}
