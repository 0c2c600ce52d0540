package httpapi

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"

	"github.com/troupe-dev/troupe/api"
)

// Federation is what the API needs of the WAN pool of every region's
// servers (the agent): nil on an agent that knows no other region.
type Federation interface {
	// Regions lists the known regions, sorted, this one included.
	Regions() []string
	// JoinWAN joins the WAN pool through the given servers' addresses.
	JoinWAN(addrs []string) (int, error)
	// RegionHandler answers requests for region from one of its
	// servers; an error wraps ErrNoRegionPath.
	RegionHandler(region string) (http.Handler, error)
}

// federationRoutes registers GET /v1/regions and /v1/agent/join.
func (s *Server) federationRoutes(m *http.ServeMux) {
	m.HandleFunc("GET /v1/regions", s.wrap(s.regions))
	m.HandleFunc("PUT /v1/agent/join", s.wrap(s.agentJoin))
	m.HandleFunc("POST /v1/agent/join", s.wrap(s.agentJoin))
}

// regions answers GET /v1/regions: the region names, sorted (Nomad's
// shape, a JSON array of strings).
func (s *Server) regions(w http.ResponseWriter, r *http.Request) (any, error) {
	if s.opts.Federation == nil {
		return []string{s.opts.Region}, nil
	}
	return s.opts.Federation.Regions(), nil
}

// agentJoin answers PUT /v1/agent/join?address=A&address=B (troupe server
// join): a server joins the WAN pool through those servers. Nomad's
// shape: {"num_joined": N, "error": ""}.
func (s *Server) agentJoin(w http.ResponseWriter, r *http.Request) (any, error) {
	addrs := r.URL.Query()["address"]
	if len(addrs) == 0 {
		return nil, codeErr(http.StatusBadRequest, "missing address to join: ?address=host[:port]")
	}
	if s.opts.Federation == nil {
		return nil, codeErr(http.StatusBadRequest, "this agent does not join other regions (not a clustered server)")
	}
	out := api.JoinResponse{}
	n, err := s.opts.Federation.JoinWAN(addrs)
	out.NumJoined = n
	if err != nil {
		out.Error = err.Error()
	}
	return out, nil
}

// forwardRegion answers r from a server of the region it is for, when
// that is not this one: the region of the job a register or plan request
// carries, else ?region=; an ACL write that the authoritative region
// makes goes there (acl_authority.go). It reports whether it answered.
func (s *Server) forwardRegion(w http.ResponseWriter, r *http.Request) bool {
	region := r.URL.Query().Get("region")
	jobRegion, err := jobRegionOf(r)
	if err != nil {
		return false // the handler reports the bad body
	}
	if jobRegion != "" {
		region = jobRegion // the job's region wins over ?region=, as Nomad's
	}
	if region == "" || region == s.opts.Region {
		auth := s.aclAuthority(r) // acl_authority.go
		if auth == "" {
			return false
		}
		if from := r.Header.Get(ACLAuthorityHeader); from != "" {
			s.writeError(w, r, codeErr(http.StatusInternalServerError,
				"ACL write passed on by region %q: region %q is not authoritative either (it names %q); every region's servers must name the same authoritative_region",
				from, s.opts.Region, auth))
			return true
		}
		region, r = auth, s.forAuthority(r, auth)
	}
	if s.opts.Federation == nil {
		WriteRegionError(w, region, fmt.Errorf("%w %q: this agent knows no other region", ErrNoRegionPath, region))
		return true
	}
	h, err := s.opts.Federation.RegionHandler(region)
	if err != nil {
		s.log.Warn("no path to region", "region", region, "method", r.Method, "path", r.URL.Path, "error", err)
		WriteRegionError(w, region, err)
		return true
	}
	h.ServeHTTP(w, r)
	return true
}

// WriteRegionError answers a request that could not be forwarded to
// region: 500 "No path to region "R"" when no server of it answered
// (Nomad's text, naming the region), 502 with the error otherwise.
func WriteRegionError(w http.ResponseWriter, region string, err error) {
	w.Header().Set("Content-Type", "text/plain; charset=utf-8")
	if errors.Is(err, ErrNoRegionPath) {
		w.WriteHeader(http.StatusInternalServerError)
		fmt.Fprintf(w, "%s %q\n", ErrNoRegionPath, region)
		return
	}
	w.WriteHeader(http.StatusBadGateway)
	fmt.Fprintf(w, "forwarding to region %q: %v\n", region, err)
}

// jobRegionOf peeks at the job of a register or plan request (PUT/POST
// /v1/jobs, /v1/job/{id}, /v1/job/{id}/plan) for its region, leaving the
// body for the handler. Other requests have none ("").
func jobRegionOf(r *http.Request) (string, error) {
	if (r.Method != http.MethodPut && r.Method != http.MethodPost) || r.Body == nil || !isJobWrite(r.URL.Path) {
		return "", nil
	}
	buf, err := peekBody(r)
	if err != nil {
		return "", err
	}
	var body struct{ Job struct{ Region string } }
	if err := json.Unmarshal(buf, &body); err != nil {
		return "", err
	}
	return body.Job.Region, nil
}

// peekBody reads r's body (up to one byte over MaxBodyBytes, so that the
// handler still sees it too large) and leaves it for the handler to read.
func peekBody(r *http.Request) ([]byte, error) {
	if r.Body == nil {
		return nil, nil
	}
	buf, err := io.ReadAll(io.LimitReader(r.Body, MaxBodyBytes+1))
	r.Body = io.NopCloser(io.MultiReader(bytes.NewReader(buf), r.Body))
	return buf, err
}

// isJobWrite says whether path registers or plans a job.
func isJobWrite(path string) bool {
	if path == "/v1/jobs" {
		return true
	}
	rest, ok := strings.CutPrefix(path, "/v1/job/")
	if !ok || rest == "" {
		return false
	}
	id, sub, _ := strings.Cut(rest, "/")
	return id != "" && (sub == "" || sub == "plan")
}
