package httpapi

import (
	"net/http"

	"github.com/troupe-dev/troupe/acl"
	"github.com/troupe-dev/troupe/cluster/state"
)

// A need is what a route asks of the request's ACL. Every registered
// route has one in routeNeeds (the route table test enforces it); a route
// without one is refused to every token but a management one.
type need struct {
	kind needKind
	// cap is the namespace (or variable) capability of the ns, object
	// and variable kinds.
	cap string
	// obj finds the namespace of the object the route names (from its
	// path values); "" when there is none.
	obj func(snap *state.Snap, r *http.Request) string
	// level checks a node/agent/operator/plugin policy; rule is a policy
	// that grants it (for the route table test).
	level func(*acl.ACL) bool
	rule  string
	// stream routes end when their token is deleted or expires.
	stream bool
	// alloc: obj looks up an allocation.
	alloc bool
}

type needKind int

const (
	needNamespace  needKind = iota // cap in ?namespace= ("default"; lists filter "*")
	needObject                     // cap in the namespace of the object named (else ?namespace=)
	needVariable                   // variable cap on {path} in ?namespace=
	needNsAny                      // any capability in the namespace {name}
	needService                    // read of services in ?namespace= (read-job, or a workload of it)
	needLevel                      // a node/agent/operator/plugin level
	needManagement                 // a management token
	needToken                      // any valid token (not the anonymous one)
	needNone                       // anyone, no token checked
	needEvents                     // the event stream's topics (events_acl.go); cap for the route table test
)

func nsCap(c string) need    { return need{kind: needNamespace, cap: c} }
func varCap(c string) need   { return need{kind: needVariable, cap: c} }
func management() need       { return need{kind: needManagement} }
func (n need) streams() need { n.stream = true; return n }

func allocCap(c string) need {
	return need{kind: needObject, cap: c, alloc: true, obj: func(s *state.Snap, r *http.Request) string {
		if a := s.AllocByID(allocIDOf(r)); a != nil {
			return a.Namespace
		}
		return ""
	}}
}

// allocIDOf is the allocation ID a route's path names.
func allocIDOf(r *http.Request) string {
	if id := r.PathValue("alloc"); id != "" {
		return id
	}
	return r.PathValue("id")
}

func evalCap(c string) need {
	return need{kind: needObject, cap: c, obj: func(s *state.Snap, r *http.Request) string {
		if e := s.EvalByID(r.PathValue("id")); e != nil {
			return e.Namespace
		}
		return ""
	}}
}

func deploymentCap(c string) need {
	return need{kind: needObject, cap: c, obj: func(s *state.Snap, r *http.Request) string {
		if d := s.DeploymentByID(r.PathValue("id")); d != nil {
			return d.Namespace
		}
		return ""
	}}
}

var (
	nodeRead      = need{kind: needLevel, level: (*acl.ACL).AllowNodeRead, rule: `node { policy = "read" }`}
	nodeWrite     = need{kind: needLevel, level: (*acl.ACL).AllowNodeWrite, rule: `node { policy = "write" }`}
	agentRead     = need{kind: needLevel, level: (*acl.ACL).AllowAgentRead, rule: `agent { policy = "read" }`}
	agentWrite    = need{kind: needLevel, level: (*acl.ACL).AllowAgentWrite, rule: `agent { policy = "write" }`}
	operatorRead  = need{kind: needLevel, level: (*acl.ACL).AllowOperatorRead, rule: `operator { policy = "read" }`}
	operatorWrite = need{kind: needLevel, level: (*acl.ACL).AllowOperatorWrite, rule: `operator { policy = "write" }`}
	pluginRead    = need{kind: needLevel, level: (*acl.ACL).AllowPluginRead, rule: `plugin { policy = "read" }`}
	pluginList    = need{kind: needLevel, level: (*acl.ACL).AllowPluginList, rule: `plugin { policy = "list" }`}
)

// routeNeeds declares the need of every route, by its registered pattern.
var routeNeeds = buildNeeds([]struct {
	need     need
	patterns []string
}{
	{nsCap(acl.NsSubmitJob), []string{"PUT /v1/jobs", "POST /v1/jobs", "PUT /v1/job/{id}", "POST /v1/job/{id}",
		"DELETE /v1/job/{id}", "PUT /v1/job/{id}/plan", "POST /v1/job/{id}/plan", "PUT /v1/job/{id}/revert",
		"POST /v1/job/{id}/revert", "PUT /v1/job/{id}/periodic/force", "POST /v1/job/{id}/periodic/force",
		"PUT /v1/job/{id}/stable", "POST /v1/job/{id}/stable", "DELETE /v1/service/{name}/{id}"}},
	{nsCap(acl.NsListJobs), []string{"GET /v1/jobs"}},
	{nsCap(acl.NsParseJob), []string{"PUT /v1/jobs/parse", "POST /v1/jobs/parse"}},
	{nsCap(acl.NsReadJob), []string{"GET /v1/job/{id}", "GET /v1/job/{id}/allocations", "GET /v1/job/{id}/versions",
		"GET /v1/job/{id}/submission", "GET /v1/job/{id}/evaluations", "GET /v1/job/{id}/summary",
		"GET /v1/job/{id}/deployments", "GET /v1/job/{id}/deployment", "GET /v1/allocations", "GET /v1/evaluations",
		"GET /v1/deployments"}},
	{need{kind: needService, cap: acl.NsReadJob}, []string{"GET /v1/services", "GET /v1/service/{name}"}},
	{nsCap(acl.NsReadJobScaling), []string{"GET /v1/job/{id}/scale"}},
	{nsCap(acl.NsScaleJob), []string{"PUT /v1/job/{id}/scale", "POST /v1/job/{id}/scale"}},
	{nsCap(acl.NsDispatchJob), []string{"PUT /v1/job/{id}/dispatch", "POST /v1/job/{id}/dispatch"}},
	{allocCap(acl.NsReadJob), []string{"GET /v1/allocation/{id}", "GET /v1/client/allocation/{alloc}/stats",
		"GET /v1/client/allocation/{alloc}/checks"}},
	{allocCap(acl.NsAllocLifecycle), []string{"POST /v1/allocation/{id}/stop", "PUT /v1/allocation/{id}/stop",
		"POST /v1/client/allocation/{alloc}/signal", "PUT /v1/client/allocation/{alloc}/signal",
		"POST /v1/client/allocation/{alloc}/restart", "PUT /v1/client/allocation/{alloc}/restart"}},
	{allocCap(acl.NsReadLogs).streams(), []string{"GET /v1/client/fs/logs/{alloc}"}},
	{allocCap(acl.NsAllocExec).streams(), []string{"GET /v1/client/allocation/{alloc}/exec"}},
	{allocCap(acl.NsReadFS), []string{"GET /v1/client/fs/ls/{alloc}", "GET /v1/client/fs/stat/{alloc}",
		"GET /v1/client/fs/cat/{alloc}", "GET /v1/client/fs/readat/{alloc}"}},
	{allocCap(acl.NsReadFS).streams(), []string{"GET /v1/client/fs/stream/{alloc}"}},
	{evalCap(acl.NsReadJob), []string{"GET /v1/evaluation/{id}", "GET /v1/evaluation/{id}/allocations"}},
	{deploymentCap(acl.NsReadJob), []string{"GET /v1/deployment/{id}", "GET /v1/deployment/allocations/{id}"}},
	{deploymentCap(acl.NsSubmitJob), []string{"PUT /v1/deployment/allocation-health/{id}", "POST /v1/deployment/allocation-health/{id}",
		"PUT /v1/deployment/fail/{id}", "POST /v1/deployment/fail/{id}", "PUT /v1/deployment/pause/{id}",
		"POST /v1/deployment/pause/{id}", "PUT /v1/deployment/promote/{id}", "POST /v1/deployment/promote/{id}",
		"PUT /v1/deployment/unblock/{id}", "POST /v1/deployment/unblock/{id}"}},
	{nsCap(acl.NsCSIListVolume), []string{"GET /v1/volumes"}},
	{nsCap(acl.NsCSIReadVolume), []string{"GET /v1/volume/csi/{id}"}},
	{nsCap(acl.NsCSIWriteVolume), []string{"PUT /v1/volume/csi/{id}", "POST /v1/volume/csi/{id}", "DELETE /v1/volume/csi/{id}",
		"PUT /v1/volume/csi/{id}/create", "POST /v1/volume/csi/{id}/create", "DELETE /v1/volume/csi/{id}/detach",
		"DELETE /v1/volume/csi/{id}/delete"}},
	{varCap(acl.VarList), []string{"GET /v1/vars"}},
	{varCap(acl.VarRead), []string{"GET /v1/var/{path...}"}},
	{varCap(acl.VarWrite), []string{"PUT /v1/var/{path...}", "POST /v1/var/{path...}"}},
	{varCap(acl.VarDestroy), []string{"DELETE /v1/var/{path...}"}},
	{nodeRead, []string{"GET /v1/nodes", "GET /v1/node/{id}", "GET /v1/node/{id}/{sub}", "GET /v1/client/stats",
		"GET /v1/agent/members", "GET /v1/node/pools", "GET /v1/node/pool/{name}", "GET /v1/node/pool/{name}/nodes",
		"GET /v1/node/pool/{name}/jobs"}},
	{nodeWrite, []string{"POST /v1/node/{id}/eligibility", "PUT /v1/node/{id}/eligibility", "POST /v1/node/{id}/drain",
		"PUT /v1/node/{id}/drain"}},
	{agentRead, []string{"GET /v1/agent/self", "GET /v1/actors", "GET /v1/agent/monitor", "GET /v1/metrics"}},
	{agentWrite, []string{"PUT /v1/agent/join", "POST /v1/agent/join"}}, // federation: join the WAN pool
	{operatorRead, []string{"GET /v1/operator/raft/configuration", "GET /v1/operator/scheduler/configuration"}},
	{operatorWrite, []string{"DELETE /v1/operator/raft/peer", "PUT /v1/operator/scheduler/configuration",
		"POST /v1/operator/scheduler/configuration"}},
	{pluginList, []string{"GET /v1/plugins"}},
	{pluginRead, []string{"GET /v1/plugin/csi/{id}"}},
	{need{kind: needNsAny}, []string{"GET /v1/namespace/{name}"}},
	{need{kind: needNone}, []string{"GET /.well-known/jwks.json", "GET /v1/regions", "GET /v1/status/leader", "GET /v1/status/peers", "POST /v1/acl/bootstrap",
		"PUT /v1/acl/bootstrap", "GET /v1/namespaces"}},
	{need{kind: needToken}, []string{"GET /v1/acl/token/self"}},
	// The event stream: the topics asked for, each event checked against
	// the token (events_acl.go); it ends with its token.
	{need{kind: needEvents, cap: acl.NsReadJob}.streams(), []string{"GET /v1/event/stream"}},
	// The web UI's static files (package ui): the pages ask for a token
	// and send it with every API call they make.
	{need{kind: needNone}, []string{"GET /ui/", "GET /{$}", "GET /ui"}},
	{management(), []string{"PUT /v1/namespace", "POST /v1/namespace", "PUT /v1/namespace/{name}", "POST /v1/namespace/{name}",
		"DELETE /v1/namespace/{name}", "PUT /v1/node/pools", "POST /v1/node/pools", "DELETE /v1/node/pool/{name}",
		"PUT /v1/system/gc", "PUT /v1/operator/keyring/rotate",
		"GET /v1/agent/keyring/list", "PUT /v1/agent/keyring/install", "POST /v1/agent/keyring/install",
		"PUT /v1/agent/keyring/use", "POST /v1/agent/keyring/use", "PUT /v1/agent/keyring/remove",
		"POST /v1/agent/keyring/remove", "POST /v1/operator/keyring/rotate",
		"GET /v1/operator/keyring/keys", "GET /v1/acl/policies", "GET /v1/acl/policy/{name}",
		"POST /v1/acl/policy/{name}", "PUT /v1/acl/policy/{name}", "DELETE /v1/acl/policy/{name}",
		"GET /v1/acl/tokens", "POST /v1/acl/token", "PUT /v1/acl/token", "GET /v1/acl/token/{accessor}",
		"POST /v1/acl/token/{accessor}", "PUT /v1/acl/token/{accessor}", "DELETE /v1/acl/token/{accessor}"}},
})

func buildNeeds(decl []struct {
	need     need
	patterns []string
}) map[string]need {
	out := map[string]need{}
	for _, d := range decl {
		for _, p := range d.patterns {
			if _, dup := out[p]; dup {
				panic("httpapi: route " + p + " declared twice")
			}
			out[p] = d.need
		}
	}
	return out
}
