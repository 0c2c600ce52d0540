package httpapi

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"runtime"
	"strconv"
	"strings"
	"time"

	"github.com/troupe-dev/troupe/api"
	"github.com/troupe-dev/troupe/cluster/state"
	"github.com/troupe-dev/troupe/jobspec"
	"github.com/troupe-dev/troupe/logfan"
	"github.com/troupe-dev/troupe/messages"
)

// MaxBodyBytes is the largest request body accepted.
const MaxBodyBytes = 4 << 20

// Backend is what the API needs from the agent.
type Backend interface {
	Store() *state.Store
	Apply(ctx context.Context, cmd *messages.Command) (any, uint64, error)
	ActorTree(ctx context.Context, nodeID string) (*api.ActorTree, error)
	TaskLogPath(allocID, task, logType string) (string, error)
	// AllocForLogs finds an allocation and its job for its logs; elsewhere
	// is the HTTP address of the agent that has them when it is not this one.
	AllocForLogs(allocID string) (a *messages.Allocation, job *messages.Job, elsewhere string, err error)
	// ClientStats samples the host and devices of node nodeID ("": this
	// agent's), or says which agent has them (elsewhere); see
	// ErrUnknownNode and ErrNoClient.
	ClientStats(ctx context.Context, nodeID string) (stats *api.HostStats, elsewhere string, err error)
	Self() *api.AgentSelf
	Members() *api.ServerMembers
	Leader() string
	Peers() ([]string, error)
	RaftConfiguration() (*api.RaftConfiguration, error)
	// RemoveRaftPeer removes a server from raft; it must run on the leader.
	RemoveRaftPeer(id string) error
	// LeaderHTTP is the leader's HTTP address, "" when this server leads
	// or none is known.
	LeaderHTTP() string
	// VolumeOp sends an operator's volume request (create, delete, detach,
	// deregister) to the leader's volume manager and returns its answer. A
	// non-nil error means the request did not get an answer (no leader,
	// transport failure); the leader's own refusals are in resp.Error.
	VolumeOp(ctx context.Context, req *messages.VolumeOpRequest) (*messages.VolumeOpResponse, error)
	// AllocOp hands an operator's request (*messages.SignalAlloc,
	// *messages.RestartAlloc) to the actor of an allocation this client
	// runs and returns its answer; its refusals are in resp.Error, a
	// non-nil error means no answer came.
	AllocOp(ctx context.Context, allocID string, req any) (*messages.AllocOpResponse, error)
	Now() time.Time
}

// Server serves the API.
type Server struct {
	b    Backend
	opts Options
	log  *slog.Logger
	mux  *http.ServeMux
	// hclSlots bounds the HCL parses running at once.
	hclSlots chan struct{}
	// acls resolves tokens; nil when ACLs are off (acl_check.go).
	acls *aclResolver
}

// Options are the API's settings from the agent's configuration.
type Options struct {
	// Region is the agent's region ("" means "global"). A request for
	// another region (?region=, or a job registered for it) is passed to
	// Federation, which answers it from a server of that region; without
	// Federation it is answered "No path to region".
	Region     string
	Federation Federation
	// Limits bound what a job may ask for (jobspec's defaults when zero).
	Limits jobspec.Limits
	// StreamHeartbeat is how long a followed fs stream or log (JSON
	// frames) stays quiet before an empty frame, {}, is sent so that
	// proxies and clients keep it open (0: defaultStreamHeartbeat).
	StreamHeartbeat time.Duration
	EventHeartbeat  time.Duration // quiet /v1/event/stream before {} (0: 10 s)
	Metrics         MetricsSource // GET /v1/metrics (nil: 404)
	Logs            *logfan.Hub   // GET /v1/agent/monitor (nil: 404)
	// ACLEnabled turns on token checks on every route (acl_check.go).
	ACLEnabled bool
	// AuthoritativeRegion is the region whose ACL policies and global
	// tokens this one replicates ("" or Region: this one). ACL writes it
	// owns are passed on to it through Federation (acl_authority.go).
	AuthoritativeRegion string
	// ACLResetFile is the server's acl-bootstrap-reset file: the index it
	// holds lets one more bootstrap through.
	ACLResetFile string
	// Tokens resolves tokens on an agent that keeps no ACL state (a
	// client-only agent: through the servers), each answer kept for
	// TokenTTL (0: DefaultTokenTTL); nil: the state store's ACL tables.
	Tokens   TokenSource
	TokenTTL time.Duration
}

// defaultStreamHeartbeat is Nomad's stream heartbeat rate.
const defaultStreamHeartbeat = time.Second

// New returns the API handler.
func New(b Backend, logger *slog.Logger, opts Options) *Server {
	if logger == nil {
		logger = slog.New(slog.DiscardHandler)
	}
	if opts.Region == "" {
		opts.Region = "global"
	}
	if opts.StreamHeartbeat <= 0 {
		opts.StreamHeartbeat = defaultStreamHeartbeat
	}
	s := &Server{b: b, opts: opts, log: logger, mux: http.NewServeMux(),
		hclSlots: make(chan struct{}, max(2, runtime.GOMAXPROCS(0)))}
	if opts.ACLEnabled {
		s.acls = newACLResolver(opts)
	}
	s.routes()
	return s
}

// routes registers the endpoints. Those that name one namespace's object
// (a job, a volume, a variable) refuse ?namespace=* (oneNamespace; see
// namespace_query.go).
func (s *Server) routes() {
	m := s.mux
	m.HandleFunc("PUT /v1/jobs", s.wrap(oneNamespace(s.jobRegister)))
	m.HandleFunc("POST /v1/jobs", s.wrap(oneNamespace(s.jobRegister)))
	m.HandleFunc("GET /v1/jobs", s.wrap(s.jobList))
	m.HandleFunc("POST /v1/jobs/parse", s.wrap(s.jobParse))
	m.HandleFunc("PUT /v1/jobs/parse", s.wrap(s.jobParse))
	m.HandleFunc("GET /v1/job/{id}", s.wrap(oneNamespace(s.jobGet)))
	m.HandleFunc("PUT /v1/job/{id}", s.wrap(oneNamespace(s.jobRegister)))
	m.HandleFunc("POST /v1/job/{id}", s.wrap(oneNamespace(s.jobRegister)))
	m.HandleFunc("DELETE /v1/job/{id}", s.wrap(oneNamespace(s.jobDeregister)))
	m.HandleFunc("GET /v1/job/{id}/allocations", s.wrap(oneNamespace(s.jobAllocs)))
	m.HandleFunc("PUT /v1/job/{id}/plan", s.wrap(oneNamespace(s.jobPlan)))
	m.HandleFunc("POST /v1/job/{id}/plan", s.wrap(oneNamespace(s.jobPlan)))
	m.HandleFunc("PUT /v1/job/{id}/scale", s.wrap(oneNamespace(s.jobScale)))
	m.HandleFunc("POST /v1/job/{id}/scale", s.wrap(oneNamespace(s.jobScale)))
	m.HandleFunc("GET /v1/job/{id}/scale", s.wrap(oneNamespace(s.jobScaleStatus)))
	m.HandleFunc("GET /v1/job/{id}/versions", s.wrap(oneNamespace(s.jobVersions)))
	m.HandleFunc("GET /v1/job/{id}/submission", s.wrap(oneNamespace(s.jobSubmission)))
	m.HandleFunc("PUT /v1/job/{id}/revert", s.wrap(oneNamespace(s.jobRevert)))
	m.HandleFunc("POST /v1/job/{id}/revert", s.wrap(oneNamespace(s.jobRevert)))
	m.HandleFunc("GET /v1/job/{id}/evaluations", s.wrap(oneNamespace(s.jobEvals)))
	m.HandleFunc("GET /v1/job/{id}/summary", s.wrap(oneNamespace(s.jobSummary)))
	m.HandleFunc("PUT /v1/job/{id}/periodic/force", s.wrap(oneNamespace(s.jobPeriodicForce)))
	m.HandleFunc("POST /v1/job/{id}/periodic/force", s.wrap(oneNamespace(s.jobPeriodicForce)))
	m.HandleFunc("PUT /v1/job/{id}/dispatch", s.wrap(oneNamespace(s.jobDispatch)))
	m.HandleFunc("POST /v1/job/{id}/dispatch", s.wrap(oneNamespace(s.jobDispatch)))
	m.HandleFunc("GET /v1/allocations", s.wrap(s.allocList))
	m.HandleFunc("GET /v1/allocation/{id}", s.wrap(s.allocGet))
	m.HandleFunc("POST /v1/allocation/{id}/stop", s.wrap(s.allocStop))
	m.HandleFunc("PUT /v1/allocation/{id}/stop", s.wrap(s.allocStop))
	m.HandleFunc("GET /v1/evaluations", s.wrap(s.evalList))
	m.HandleFunc("GET /v1/evaluation/{id}", s.wrap(s.evalGet))
	m.HandleFunc("GET /v1/evaluation/{id}/allocations", s.wrap(s.evalAllocs))
	m.HandleFunc("GET /v1/nodes", s.wrap(s.nodeList))
	m.HandleFunc("GET /v1/node/{id}", s.wrap(s.nodeGet))
	s.nodePoolRoutes(m) // and GET /v1/node/{id}/allocations
	s.namespaceRoutes(m)
	m.HandleFunc("POST /v1/node/{id}/eligibility", s.wrap(s.nodeEligibility))
	m.HandleFunc("PUT /v1/node/{id}/eligibility", s.wrap(s.nodeEligibility))
	m.HandleFunc("POST /v1/node/{id}/drain", s.wrap(s.nodeDrain))
	m.HandleFunc("PUT /v1/node/{id}/drain", s.wrap(s.nodeDrain))
	m.HandleFunc("GET /v1/client/fs/logs/{alloc}", s.logs)
	m.HandleFunc("GET /v1/client/allocation/{alloc}/exec", s.allocExec)
	s.allocFSRoutes(m) // ls, stat, cat, readat, stream
	m.HandleFunc("GET /v1/client/allocation/{alloc}/stats", s.wrap(s.allocStats))
	m.HandleFunc("POST /v1/client/allocation/{alloc}/signal", s.wrap(s.allocSignal))
	m.HandleFunc("PUT /v1/client/allocation/{alloc}/signal", s.wrap(s.allocSignal))
	m.HandleFunc("POST /v1/client/allocation/{alloc}/restart", s.wrap(s.allocRestart))
	m.HandleFunc("PUT /v1/client/allocation/{alloc}/restart", s.wrap(s.allocRestart))
	m.HandleFunc("GET /v1/client/stats", s.wrap(s.clientStats))
	m.HandleFunc("GET /v1/agent/self", s.wrap(s.agentSelf))
	m.HandleFunc("GET /v1/agent/members", s.wrap(s.agentMembers))
	s.gossipKeyringRoutes(m) // /v1/agent/keyring/{list,install,use,remove}
	m.HandleFunc("GET /v1/status/leader", s.wrap(s.statusLeader))
	m.HandleFunc("GET /v1/status/peers", s.wrap(s.statusPeers))
	m.HandleFunc("GET /v1/operator/raft/configuration", s.wrap(s.raftConfig))
	m.HandleFunc("DELETE /v1/operator/raft/peer", s.removePeer)
	m.HandleFunc("PUT /v1/system/gc", s.wrap(s.systemGC))
	m.HandleFunc("GET /v1/operator/scheduler/configuration", s.wrap(s.schedulerGetConfig))
	m.HandleFunc("PUT /v1/operator/scheduler/configuration", s.wrap(s.schedulerSetConfig))
	m.HandleFunc("POST /v1/operator/scheduler/configuration", s.wrap(s.schedulerSetConfig))
	m.HandleFunc("GET /v1/actors", s.wrap(s.actors))
	m.HandleFunc("GET /v1/volumes", s.wrap(s.volumeList))
	m.HandleFunc("GET /v1/volume/csi/{id}", s.wrap(oneNamespace(s.volumeGet)))
	m.HandleFunc("PUT /v1/volume/csi/{id}", s.wrap(oneNamespace(s.volumeRegister)))
	m.HandleFunc("POST /v1/volume/csi/{id}", s.wrap(oneNamespace(s.volumeRegister)))
	m.HandleFunc("DELETE /v1/volume/csi/{id}", s.wrap(oneNamespace(s.volumeDeregister)))
	m.HandleFunc("PUT /v1/volume/csi/{id}/create", s.wrap(oneNamespace(s.volumeCreate)))
	m.HandleFunc("POST /v1/volume/csi/{id}/create", s.wrap(oneNamespace(s.volumeCreate)))
	m.HandleFunc("DELETE /v1/volume/csi/{id}/detach", s.wrap(oneNamespace(s.volumeDetach)))
	m.HandleFunc("DELETE /v1/volume/csi/{id}/delete", s.wrap(oneNamespace(s.volumeDelete)))
	m.HandleFunc("GET /v1/plugins", s.wrap(s.pluginList))
	m.HandleFunc("GET /v1/plugin/csi/{id}", s.wrap(s.pluginGet))
	s.variableRoutes(m)
	s.deploymentRoutes(m)
	s.serviceRoutes(m)
	s.eventRoutes(m) // and /v1/metrics, /v1/agent/monitor
	s.uiRoutes(m)    // the web UI: GET /ui/..., and / redirects there
	s.aclRoutes(m)
	s.federationRoutes(m)                                      // /v1/regions, /v1/agent/join
	m.HandleFunc("GET /.well-known/jwks.json", s.wrap(s.jwks)) // acl_identity.go
}

// ServeHTTP implements http.Handler. The query string is checked before
// any handler runs, and a handler's panic is answered with a 500 that
// says so (and logged with its stack) instead of a dropped connection.
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	defer s.recoverPanic(w, r)
	if s.forwardRegion(w, r) { // federation.go
		return
	}
	s.leaderHeaders(w)
	if r.Body != nil {
		r.Body = http.MaxBytesReader(w, r.Body, MaxBodyBytes)
	}
	r, err := withQuery(r)
	if err == nil && s.acls != nil {
		var checked *http.Request
		var done func()
		if checked, done, err = s.authorize(r); err == nil {
			r = checked
			defer done()
		}
	}
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	s.mux.ServeHTTP(w, r)
}

// HTTPError is an error with a status code.
type HTTPError struct {
	Code int
	Msg  string
}

func (e *HTTPError) Error() string { return e.Msg }

func codeErr(code int, format string, args ...any) error {
	return &HTTPError{Code: code, Msg: fmt.Sprintf(format, args...)}
}

// handler returns the response object, or an error.
type handler func(w http.ResponseWriter, r *http.Request) (any, error)

// errProxied says the request was answered by another agent.
var errProxied = errors.New("httpapi: proxied")

func (s *Server) wrap(h handler) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		out, err := h(w, r)
		if errors.Is(err, errProxied) {
			return
		}
		if err != nil {
			s.writeError(w, r, err)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		if err := writeJSON(w, out, optsOf(r).pretty); err != nil {
			s.log.Debug("http: write response", "error", err)
		}
	}
}

func (s *Server) writeError(w http.ResponseWriter, r *http.Request, err error) {
	code := http.StatusInternalServerError
	var he *HTTPError
	var mbe *http.MaxBytesError
	switch {
	case errors.As(err, &he):
		code = he.Code
	case poolErrorCode(err) != 0:
		code = poolErrorCode(err)
	case errors.As(err, &mbe):
		code = http.StatusRequestEntityTooLarge
		err = fmt.Errorf("request body too large: limit is %d bytes", mbe.Limit)
	case errors.Is(err, state.ErrJobNotFound), errors.Is(err, state.ErrNodeNotFound), errors.Is(err, state.ErrAllocNotFound):
		code = http.StatusNotFound
	case isNotFound(err):
		code = http.StatusNotFound
	case errors.Is(err, state.ErrJobModifyIndex), isConflict(err):
		code = http.StatusConflict
	case isNoLeader(err):
		s.log.Warn("no cluster leader in time", "method", r.Method, "path", r.URL.Path, "error", err)
		w.Header().Set("Content-Type", "text/plain; charset=utf-8")
		w.WriteHeader(http.StatusInternalServerError)
		fmt.Fprintln(w, api.NoLeaderBody)
		return
	}
	if code >= 500 {
		s.log.Error("http request failed", "method", r.Method, "path", r.URL.Path, "error", err)
	}
	w.Header().Set("Content-Type", "text/plain; charset=utf-8")
	w.WriteHeader(code)
	fmt.Fprintln(w, err.Error())
}

// isNotFound recognises errors that say so (a forwarded request the
// leader answered with not_found).
func isNotFound(err error) bool {
	var nf interface{ NotFound() bool }
	return errors.As(err, &nf) && nf.NotFound()
}

// isConflict recognises a forwarded write that the leader refused as
// conflicting with its state.
func isConflict(err error) bool {
	var c interface{ Conflict() bool }
	return errors.As(err, &c) && c.Conflict()
}

// toLeader passes r on to the leader when another server leads, and
// reports whether it did; a handler then returns errProxied.
func (s *Server) toLeader(w http.ResponseWriter, r *http.Request) bool {
	leader := s.b.LeaderHTTP()
	if leader == "" {
		return false
	}
	ProxyTo(leader).ServeHTTP(w, r)
	return true
}

// decodeBody decodes a JSON body into v. The body must be one JSON value
// that means one thing (jobspec.CheckJSON: valid UTF-8, no key twice, not
// too deep) with nothing after it.
func decodeBody(r *http.Request, v any) error {
	body, err := io.ReadAll(r.Body)
	if err != nil {
		return err
	}
	if err := jobspec.CheckJSON(body); err != nil {
		return codeErr(http.StatusBadRequest, "invalid request body: %v", err)
	}
	if err := json.Unmarshal(body, v); err != nil {
		return codeErr(http.StatusBadRequest, "invalid request body: %v", err)
	}
	return nil
}

// query runs a read, as a blocking query when ?index= is given: it waits
// until one of tables changes past index (or ?wait=, default 5m, passes),
// then answers with X-Nomad-Index.
func (s *Server) query(w http.ResponseWriter, r *http.Request, tables []string, read func(*state.Snap) (any, error)) (any, error) {
	opts := optsOf(r)
	// Consistent reads come from a leader whose store has applied every
	// committed entry, waiting for one when there is none yet; ?stale
	// lets this server answer from its own replica at once.
	if !opts.stale {
		proxied, err := s.readAtLeader(w, r)
		if err != nil {
			return nil, err
		}
		if proxied {
			return nil, errProxied
		}
		s.leaderHeaders(w) // a leader may have come while it waited
	}
	store := s.b.Store()
	if opts.index > 0 {
		watch, stop := s.aclWatch(r)
		ctx, cancel := context.WithTimeout(watch, opts.wait)
		store.Wait(ctx, opts.index, tables...)
		cancel()
		stop()
		if err := s.aclRecheck(r); err != nil {
			return nil, err
		}
	}
	snap := store.Snapshot()
	index := snap.Index(tables...)
	if index == 0 {
		index = 1
	}
	setIndex(w, index)
	return read(snap)
}

// leaderHeaders says on every answer whether a leader is known and how
// long ago this server last heard from it, in milliseconds (0 on the
// leader), as Nomad's clients read them; setIndex adds the index.
func (s *Server) leaderHeaders(w http.ResponseWriter) {
	known, since := s.b.Leader() != "", time.Duration(0)
	if lc, ok := s.b.(leaderWaiter); ok {
		since, known = lc.LastContact()
	}
	w.Header().Set("X-Nomad-KnownLeader", strconv.FormatBool(known))
	w.Header().Set("X-Nomad-LastContact", strconv.FormatInt(since.Milliseconds(), 10))
}

func setIndex(w http.ResponseWriter, index uint64) {
	v := strconv.FormatUint(index, 10)
	w.Header().Set("X-Nomad-Index", v)
	w.Header().Set("X-Troupe-Index", v)
}

// matchPrefix filters by ?prefix=.
func matchPrefix(r *http.Request, id string) bool {
	p := r.URL.Query().Get("prefix")
	return p == "" || strings.HasPrefix(id, p)
}

// apply proposes a command; errors that name bad input become 4xx.
func (s *Server) apply(r *http.Request, cmd *messages.Command) (any, uint64, error) {
	if cmd.Time == 0 {
		cmd.Time = s.b.Now().UnixNano()
	}
	return s.b.Apply(r.Context(), cmd)
}
