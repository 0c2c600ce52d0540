package httpapi

import (
	"errors"
	"io"
	"net/http"

	"github.com/troupe-dev/troupe/api"
	"github.com/troupe-dev/troupe/cluster/state"
	"github.com/troupe-dev/troupe/jobspec"
	"github.com/troupe-dev/troupe/messages"
)

// Node pool endpoints, in the shapes of Nomad's /v1/node/pools and
// /v1/node/pool/:name. Writes go to the leader's HTTP API, which checks
// them against its state (the FSM checks them again).

var (
	nodePoolTables     = []string{state.TableNodePools}
	nodePoolNodeTables = []string{state.TableNodePools, state.TableNodes}
	nodePoolJobTables  = []string{state.TableNodePools, state.TableJobs, state.TableAllocs}
)

func (s *Server) nodePoolRoutes(m *http.ServeMux) {
	m.HandleFunc("GET /v1/node/pools", s.wrap(s.nodePoolList))
	m.HandleFunc("PUT /v1/node/pools", s.wrap(s.nodePoolUpsert))
	m.HandleFunc("POST /v1/node/pools", s.wrap(s.nodePoolUpsert))
	m.HandleFunc("GET /v1/node/pool/{name}", s.wrap(s.nodePoolGet))
	m.HandleFunc("DELETE /v1/node/pool/{name}", s.wrap(s.nodePoolDelete))
	m.HandleFunc("GET /v1/node/pool/{name}/nodes", s.wrap(s.nodePoolNodes))
	m.HandleFunc("GET /v1/node/pool/{name}/jobs", s.wrap(s.nodePoolJobs))
	// GET /v1/node/pool/:name and GET /v1/node/:id/allocations overlap
	// (/v1/node/pool/allocations) with neither more specific, which Go's
	// mux refuses: the node's sub-resources share one pattern, which
	// /v1/node/pool/{name} is more specific than (so, as in Nomad, that
	// path is the pool "allocations").
	m.HandleFunc("GET /v1/node/{id}/{sub}", s.wrap(s.nodeSub))
}

// nodeSub serves GET /v1/node/:id/<sub>.
func (s *Server) nodeSub(w http.ResponseWriter, r *http.Request) (any, error) {
	switch r.PathValue("sub") {
	case "allocations":
		return s.nodeAllocs(w, r)
	}
	return nil, codeErr(http.StatusNotFound, "no such endpoint: %s", r.URL.Path)
}

// nodePoolList handles GET /v1/node/pools[?prefix=], by name.
func (s *Server) nodePoolList(w http.ResponseWriter, r *http.Request) (any, error) {
	return s.query(w, r, nodePoolTables, func(snap *state.Snap) (any, error) {
		out := []*messages.NodePool{}
		for _, p := range snap.NodePools() {
			if matchPrefix(r, p.Name) {
				out = append(out, p)
			}
		}
		return paged(w, r, out, nodePoolOrder)
	})
}

// nodePoolGet handles GET /v1/node/pool/:name.
func (s *Server) nodePoolGet(w http.ResponseWriter, r *http.Request) (any, error) {
	return s.poolQuery(w, r, nodePoolTables, func(_ *state.Snap, p *messages.NodePool) any { return p })
}

// nodePoolNodes handles GET /v1/node/pool/:name/nodes ("all": every node).
func (s *Server) nodePoolNodes(w http.ResponseWriter, r *http.Request) (any, error) {
	return s.poolQuery(w, r, nodePoolNodeTables, func(snap *state.Snap, p *messages.NodePool) any {
		out := []*api.NodeListStub{}
		for _, n := range snap.NodesByPool(p.Name) {
			out = append(out, nodeStub(n))
		}
		return out
	})
}

// nodePoolJobs handles GET /v1/node/pool/:name/jobs: the jobs that name
// the pool (for "all", those in "all", as Nomad lists them).
func (s *Server) nodePoolJobs(w http.ResponseWriter, r *http.Request) (any, error) {
	return s.poolQuery(w, r, nodePoolJobTables, func(snap *state.Snap, p *messages.NodePool) any {
		out := []*api.JobListStub{}
		for _, j := range snap.JobsByPool(p.Name) {
			out = append(out, jobStub(snap, j))
		}
		return out
	})
}

// poolQuery is a read of the pool the URL names: 400 for a name that
// cannot be a pool's, 404 for an unknown pool.
func (s *Server) poolQuery(w http.ResponseWriter, r *http.Request, tables []string, read func(*state.Snap, *messages.NodePool) any) (any, error) {
	name, err := poolName(r)
	if err != nil {
		return nil, err
	}
	return s.query(w, r, tables, func(snap *state.Snap) (any, error) {
		p := snap.NodePoolByName(name)
		if p == nil {
			return nil, codeErr(http.StatusNotFound, "node pool not found: %q", name)
		}
		return read(snap, p), nil
	})
}

func poolName(r *http.Request) (string, error) {
	name := r.PathValue("name")
	if err := state.ValidateNodePoolName(name); err != nil {
		return "", codeErr(http.StatusBadRequest, "%v", err)
	}
	return name, nil
}

// nodePoolUpsert handles PUT /v1/node/pools with a NodePool body (Nomad's
// client sends one pool): it creates the pool or replaces its
// description and meta.
func (s *Server) nodePoolUpsert(w http.ResponseWriter, r *http.Request) (any, error) {
	if s.writeToLeader(w, r) {
		return nil, errProxied
	}
	body, err := io.ReadAll(r.Body)
	if err != nil {
		return nil, err
	}
	pool, err := jobspec.ParseNodePoolJSON(body)
	if err != nil {
		return nil, codeErr(http.StatusBadRequest, "invalid node pool: %v", err)
	}
	pools := []*messages.NodePool{pool}
	if err := state.CheckUpsertNodePools(pools); err != nil {
		return nil, poolError(err)
	}
	return s.applyPools(w, r, &messages.Command{Cmd: &messages.Command_UpsertNodePools{
		UpsertNodePools: &messages.UpsertNodePools{Pools: pools}}})
}

// nodePoolDelete handles DELETE /v1/node/pool/:name: refused while the
// pool has nodes or jobs that are not dead, and for the built-in pools.
func (s *Server) nodePoolDelete(w http.ResponseWriter, r *http.Request) (any, error) {
	if s.writeToLeader(w, r) {
		return nil, errProxied
	}
	name, err := poolName(r)
	if err != nil {
		return nil, err
	}
	names := []string{name}
	if err := state.CheckDeleteNodePools(s.b.Store().Snapshot(), names); err != nil {
		return nil, poolError(err)
	}
	return s.applyPools(w, r, &messages.Command{Cmd: &messages.Command_DeleteNodePools{
		DeleteNodePools: &messages.DeleteNodePools{Names: names}}})
}

// applyPools commits a node pool command; as Nomad's, the answer is only
// the index, in X-Nomad-Index. The FSM's refusals are answered by
// writeError (poolErrorCode).
func (s *Server) applyPools(w http.ResponseWriter, r *http.Request, cmd *messages.Command) (any, error) {
	_, index, err := s.apply(r, cmd)
	if err != nil {
		return nil, err
	}
	setIndex(w, index)
	return nil, nil
}

// checkJobPool refuses a job whose node pool does not exist (Nomad's
// words).
func (s *Server) checkJobPool(job *messages.Job) error {
	pool := state.PoolOrDefault(job.GetNodePool())
	if s.b.Store().Snapshot().NodePoolByName(pool) == nil {
		return codeErr(http.StatusBadRequest, "job %q is in nonexistent node pool %q", job.GetID(), pool)
	}
	return nil
}

// poolErrorCode is the status of a refused node pool change: 404 for an
// unknown pool, 409 for one in use, 400 for bad input or a built-in
// pool; 0 for another error.
func poolErrorCode(err error) int {
	switch {
	case errors.Is(err, state.ErrNodePoolNotFound):
		return http.StatusNotFound
	case errors.Is(err, state.ErrNodePoolInUse):
		return http.StatusConflict
	case errors.Is(err, state.ErrInvalidNodePool), errors.Is(err, state.ErrNodePoolBuiltIn):
		return http.StatusBadRequest
	}
	return 0
}

// poolError is the error of a node pool check as an HTTP error.
func poolError(err error) error {
	code := poolErrorCode(err)
	if code == 0 {
		code = http.StatusBadRequest
	}
	return codeErr(code, "%v", err)
}
