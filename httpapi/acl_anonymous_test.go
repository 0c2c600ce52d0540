package httpapi

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/troupe-dev/troupe/api"
	"github.com/troupe-dev/troupe/messages"
)

// TestACLAnonymousPolicy: a request with no token gets the rules of the
// policy named "anonymous" (Nomad's anonymous token), from when it is
// written until it is deleted, over a real state machine with ACLs on
// and bootstrapped.
func TestACLAnonymousPolicy(t *testing.T) {
	s, b, mgmt := aclServer(t, "")
	b.mustApply(t, &messages.Command{Cmd: &messages.Command_RegisterJob{RegisterJob: &messages.RegisterJob{
		Job: testJobInNs("web", "default")}}})
	require.Equal(t, http.StatusForbidden, aclDo(t, s, "GET", "/v1/jobs", "", nil).Code, "no anonymous policy: a request without a token may do nothing")

	rec := aclDo(t, s, "POST", "/v1/acl/policy/anonymous", mgmt, &api.ACLPolicy{Name: "anonymous",
		Rules: `namespace "default" { policy = "read" }`})
	require.Equal(t, http.StatusOK, rec.Code, rec.Body.String())
	rec = aclDo(t, s, "GET", "/v1/jobs", "", nil)
	require.Equal(t, http.StatusOK, rec.Code, rec.Body.String())
	var jobs []map[string]any
	require.NoError(t, json.Unmarshal(rec.Body.Bytes(), &jobs))
	require.Len(t, jobs, 1)
	require.Equal(t, "web", jobs[0]["ID"])
	require.Equal(t, http.StatusOK, aclDo(t, s, "GET", "/v1/job/web", "", nil).Code)
	require.Equal(t, http.StatusForbidden, aclDo(t, s, "GET", "/v1/nodes", "", nil).Code, "read of default only")

	before := b.Store().Snapshot().Index()
	rec = aclDo(t, s, "PUT", "/v1/jobs", "", map[string]any{"Job": map[string]any{"ID": "anon", "Type": "service",
		"Datacenters": []string{"dc1"}, "TaskGroups": []any{map[string]any{"Name": "g", "Count": 1,
			"Tasks": []any{map[string]any{"Name": "t", "Driver": "exec", "Config": map[string]any{"command": "/bin/true"}}}}}}})
	require.Equal(t, http.StatusForbidden, rec.Code, rec.Body.String())
	require.Equal(t, "Permission denied", strings.TrimSpace(rec.Body.String()))
	require.Equal(t, before, b.Store().Snapshot().Index(), "a refused registration changes nothing")
	require.Nil(t, b.Store().Snapshot().JobByID("default", "anon"))

	// A token's own policies are not widened by the anonymous policy.
	nodes := clientToken(t, s, mgmt, "nodes", `node { policy = "read" }`)
	require.Equal(t, http.StatusForbidden, aclDo(t, s, "GET", "/v1/jobs", nodes, nil).Code)

	require.Equal(t, http.StatusOK, aclDo(t, s, "DELETE", "/v1/acl/policy/anonymous", mgmt, nil).Code)
	rec = aclDo(t, s, "GET", "/v1/jobs", "", nil)
	require.Equal(t, http.StatusForbidden, rec.Code, "the policy is gone: %s", rec.Body.String())
	require.Equal(t, "Permission denied", strings.TrimSpace(rec.Body.String()))
}
