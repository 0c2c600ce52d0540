package agent

import (
	"net/http"
	"testing"
	"time"

	nomad "github.com/hashicorp/nomad/api"
	"github.com/stretchr/testify/require"
)

// TestNamespacesEndToEnd drives a dev agent with Nomad's own client: a
// namespace is registered, a job runs in it, `*` lists every namespace's
// jobs and allocations, the namespace cannot be deleted while the job
// lives, and a job in a namespace that does not exist is a 400.
func TestNamespacesEndToEnd(t *testing.T) {
	a := startAgent(t, testConfig(t, t.TempDir()))
	defer a.Shutdown()
	c, err := nomad.NewClient(&nomad.Config{Address: "http://" + a.HTTPAddr()})
	require.NoError(t, err)
	prodClient, err := nomad.NewClient(&nomad.Config{Address: "http://" + a.HTTPAddr(), Namespace: "prod"})
	require.NoError(t, err)
	nss := c.Namespaces()

	_, err = nss.Register(&nomad.Namespace{Name: "prod", Description: "Production"}, nil)
	require.NoError(t, err)
	list, _, err := nss.List(nil)
	require.NoError(t, err)
	require.Len(t, list, 2)
	prod, _, err := nss.Info("prod", nil)
	require.NoError(t, err)
	require.Equal(t, "Production", prod.Description)

	_, _, err = prodClient.Jobs().Register(poolJob("web", ""), nil)
	require.NoError(t, err)
	_, _, err = c.Jobs().Register(poolJob("api", ""), nil)
	require.NoError(t, err)
	alloc := waitAllocStatus(t, prodClient, "web", "running")
	require.Equal(t, "prod", alloc.Namespace)
	waitAllocStatus(t, c, "api", "running")

	job, _, err := prodClient.Jobs().Info("web", nil)
	require.NoError(t, err)
	require.Equal(t, "prod", *job.Namespace)
	_, _, err = c.Jobs().Info("web", nil)
	require.Equal(t, http.StatusNotFound, statusCode(t, err), "web is not in default")

	jobIDs := func(q *nomad.QueryOptions) []string {
		jobs, _, err := c.Jobs().List(q)
		require.NoError(t, err)
		var out []string
		for _, j := range jobs {
			out = append(out, j.Namespace+"/"+j.ID)
		}
		return out
	}
	require.ElementsMatch(t, []string{"default/api"}, jobIDs(nil))
	require.ElementsMatch(t, []string{"prod/web"}, jobIDs(&nomad.QueryOptions{Namespace: "prod"}))
	require.ElementsMatch(t, []string{"default/api", "prod/web"}, jobIDs(&nomad.QueryOptions{Namespace: "*"}))
	allocs, _, err := c.Allocations().List(&nomad.QueryOptions{Namespace: "*"})
	require.NoError(t, err)
	require.Len(t, allocs, 2)
	allocs, _, err = c.Allocations().List(&nomad.QueryOptions{Namespace: "prod"})
	require.NoError(t, err)
	require.Len(t, allocs, 1)
	require.Equal(t, "web", allocs[0].JobID)

	// A namespace with a live job stays; default always does.
	_, err = nss.Delete("prod", nil)
	require.Equal(t, http.StatusConflict, statusCode(t, err))
	require.ErrorContains(t, err, `namespace "prod" has non-terminal jobs: web`)
	_, err = nss.Delete("default", nil)
	require.Equal(t, http.StatusBadRequest, statusCode(t, err))

	// A namespace that does not exist is refused.
	_, _, err = c.Jobs().Register(poolJob("nowhere", ""), &nomad.WriteOptions{Namespace: "nope"})
	require.Equal(t, http.StatusBadRequest, statusCode(t, err))
	require.ErrorContains(t, err, `namespace "nope" does not exist: job "nowhere" cannot be in it`)

	// Once the job is dead, the namespace goes.
	_, _, err = prodClient.Jobs().Deregister("web", false, nil)
	require.NoError(t, err)
	require.Eventually(t, func() bool {
		j, _, err := prodClient.Jobs().Info("web", nil)
		return err == nil && *j.Status == "dead"
	}, 20*time.Second, 20*time.Millisecond)
	_, err = nss.Delete("prod", nil)
	require.NoError(t, err)
	_, _, err = nss.Info("prod", nil)
	require.Equal(t, http.StatusNotFound, statusCode(t, err))
}
