package httpapi

import (
	"encoding/json"
	"net/http"
	"testing"
	"time"

	jose "github.com/go-jose/go-jose/v4"
	"github.com/stretchr/testify/require"

	"github.com/troupe-dev/troupe/api"
	"github.com/troupe-dev/troupe/cluster/identity"
	"github.com/troupe-dev/troupe/messages"
)

// signFor signs the default identity of task t of allocation id with the
// store's keyring, at the backend's time.
func signFor(t *testing.T, b *aclBackend, id string, ttl time.Duration) string {
	t.Helper()
	snap := b.Store().Snapshot()
	c, err := identity.ForTask("global", snap.AllocByID(id), "t", &messages.TaskIdentity{TTL: int64(ttl)}, b.Now())
	require.NoError(t, err)
	tok, err := identity.Sign(snap.RootKeys(), c)
	require.NoError(t, err)
	return tok
}

// TestWorkloadIdentityToken: a workload identity JWT is a token that
// reads its own job's variables and its namespace's services, and
// nothing else; it stops working when it expires, when its allocation
// stops, and when its key leaves the keyring.
func TestWorkloadIdentityToken(t *testing.T) {
	s, b, mgmt := aclServer(t, "")
	withServices(t, b.fsmBackend, "default", "web", 1)
	for _, p := range []string{"nomad/jobs/web", "nomad/jobs/web/g/t", "nomad/jobs/db", "app/x"} {
		rec := aclDo(t, s, "PUT", "/v1/var/"+p, mgmt, &api.Variable{Items: map[string]string{"k": p}})
		require.Equal(t, http.StatusOK, rec.Code, rec.Body.String())
	}
	const alloc = "default-web-a0"
	jwt := signFor(t, b, alloc, time.Hour)

	for path, want := range map[string]int{
		"/v1/var/nomad/jobs/web":             http.StatusOK,
		"/v1/var/nomad/jobs/web/g/t":         http.StatusOK,
		"/v1/services":                       http.StatusOK,
		"/v1/service/web":                    http.StatusOK,
		"/v1/var/nomad/jobs/db":              http.StatusForbidden,
		"/v1/var/app/x":                      http.StatusForbidden,
		"/v1/var/nomad/jobs/web?namespace=o": http.StatusForbidden,
		"/v1/jobs":                           http.StatusForbidden,
		"/v1/job/web":                        http.StatusForbidden,
		"/v1/allocations":                    http.StatusForbidden,
		"/v1/nodes":                          http.StatusForbidden,
		"/v1/acl/tokens":                     http.StatusForbidden,
	} {
		rec := aclDo(t, s, "GET", path, jwt, nil)
		require.Equal(t, want, rec.Code, "%s: %s", path, rec.Body.String())
	}
	before := b.Store().Snapshot().Index()
	rec := aclDo(t, s, "PUT", "/v1/var/nomad/jobs/web", jwt, &api.Variable{Items: map[string]string{"k": "v"}})
	require.Equal(t, http.StatusForbidden, rec.Code)
	require.Equal(t, before, b.Store().Snapshot().Index(), "a refused write changes nothing")

	// The list shows only its own job's variables.
	rec = aclDo(t, s, "GET", "/v1/vars?prefix=nomad", jwt, nil)
	require.Equal(t, http.StatusOK, rec.Code, rec.Body.String())
	var list []api.VariableMetadata
	require.NoError(t, json.Unmarshal(rec.Body.Bytes(), &list))
	var paths []string
	for _, v := range list {
		paths = append(paths, v.Path)
	}
	require.ElementsMatch(t, []string{"nomad/jobs/web", "nomad/jobs/web/g/t"}, paths)

	// As a bearer token too.
	r := routeRequest("GET /v1/var/nomad/jobs/web", "")
	r.Header.Set("Authorization", "Bearer "+jwt)
	_, done, err := s.authorize(r)
	require.NoError(t, err)
	done()

	// Expired.
	short := signFor(t, b, alloc, time.Minute)
	b.now.Add(int64(2 * time.Minute))
	require.Equal(t, http.StatusForbidden, aclDo(t, s, "GET", "/v1/var/nomad/jobs/web", short, nil).Code)
	require.Equal(t, http.StatusOK, aclDo(t, s, "GET", "/v1/var/nomad/jobs/web", jwt, nil).Code)

	// Rotation: the old key still verifies; new identities use the new key.
	rec = aclDo(t, s, "PUT", "/v1/operator/keyring/rotate", mgmt, nil)
	require.Equal(t, http.StatusOK, rec.Code, rec.Body.String())
	require.Equal(t, http.StatusOK, aclDo(t, s, "GET", "/v1/var/nomad/jobs/web", jwt, nil).Code)
	fresh := signFor(t, b, alloc, 0)
	require.Equal(t, http.StatusOK, aclDo(t, s, "GET", "/v1/var/nomad/jobs/web", fresh, nil).Code)

	// JWKS, open to all, holds both keys and verifies the JWT.
	rec = aclDo(t, s, "GET", "/.well-known/jwks.json", "", nil)
	require.Equal(t, http.StatusOK, rec.Code, rec.Body.String())
	var set jose.JSONWebKeySet
	require.NoError(t, json.Unmarshal(rec.Body.Bytes(), &set))
	require.Len(t, set.Keys, 2)

	// The allocation stops: its identities stop working.
	b.mustApply(t, &messages.Command{Cmd: &messages.Command_UpdateAllocsFromClient{UpdateAllocsFromClient: &messages.UpdateAllocsFromClient{
		Allocs: []*messages.Allocation{{ID: alloc, ClientStatus: messages.AllocClientStatusComplete}}}}})
	rec = aclDo(t, s, "GET", "/v1/var/nomad/jobs/web", fresh, nil)
	require.Equal(t, http.StatusForbidden, rec.Code)
	require.Contains(t, rec.Body.String(), "not running")

	// A forged token.
	rec = aclDo(t, s, "GET", "/v1/var/nomad/jobs/web", jwt[:len(jwt)-5]+"AAAAA", nil)
	require.Equal(t, http.StatusForbidden, rec.Code)
}
