package httpapi

import (
	"net/http"
	"strings"
	"testing"
	"time"

	nomad "github.com/hashicorp/nomad/api"
	"github.com/stretchr/testify/require"

	"github.com/troupe-dev/troupe/messages"
)

func poolNode(id, pool string) *messages.Command {
	return &messages.Command{Cmd: &messages.Command_RegisterNode{RegisterNode: &messages.RegisterNode{
		Node: &messages.Node{ID: id, Name: id, NodePool: pool, Status: "ready", Datacenter: "dc1"}}}}
}

func poolJob(id, pool string) *messages.Command {
	return &messages.Command{Cmd: &messages.Command_RegisterJob{RegisterJob: &messages.RegisterJob{
		Job: &messages.Job{ID: id, Name: id, Namespace: "default", Type: "service", NodePool: pool}}}}
}

func names(pools []*nomad.NodePool) []string {
	var out []string
	for _, p := range pools {
		out = append(out, p.Name)
	}
	return out
}

func statusOf(t *testing.T, err error) int {
	t.Helper()
	var ure nomad.UnexpectedResponseError
	require.ErrorAs(t, err, &ure)
	return ure.StatusCode()
}

func TestNodePoolsWithNomadClient(t *testing.T) {
	b := newFSMBackend()
	c := nomadAgainst(t, b)
	pools := c.NodePools()

	list, meta, err := pools.List(nil)
	require.NoError(t, err)
	require.Equal(t, []string{"all", "default"}, names(list))
	require.Equal(t, "Default node pool.", list[1].Description)
	require.NotZero(t, meta.LastIndex)

	wm, err := pools.Register(&nomad.NodePool{Name: "dev", Description: "Dev nodes", Meta: map[string]string{"owner": "sre"}}, nil)
	require.NoError(t, err)
	require.NotZero(t, wm.LastIndex)
	dev, _, err := pools.Info("dev", nil)
	require.NoError(t, err)
	require.Equal(t, "Dev nodes", dev.Description)
	require.Equal(t, map[string]string{"owner": "sre"}, dev.Meta)
	require.Equal(t, wm.LastIndex, dev.CreateIndex)

	_, err = pools.Register(&nomad.NodePool{Name: "dev", Description: "changed"}, nil)
	require.NoError(t, err)
	dev2, _, err := pools.Info("dev", nil)
	require.NoError(t, err)
	require.Equal(t, "changed", dev2.Description)
	require.Equal(t, dev.CreateIndex, dev2.CreateIndex)
	require.Greater(t, dev2.ModifyIndex, dev.ModifyIndex)

	_, err = pools.Register(&nomad.NodePool{Name: "devx"}, nil)
	require.NoError(t, err)
	prefixed, _, err := pools.PrefixList("dev", nil)
	require.NoError(t, err)
	require.Equal(t, []string{"dev", "devx"}, names(prefixed))

	b.mustApply(t, poolNode("n1", "dev"))
	b.mustApply(t, poolNode("n2", ""))
	b.mustApply(t, poolJob("web", "dev"))
	b.mustApply(t, poolJob("api", ""))
	nodes, _, err := pools.ListNodes("dev", nil)
	require.NoError(t, err)
	require.Len(t, nodes, 1)
	require.Equal(t, "n1", nodes[0].ID)
	require.Equal(t, "dev", nodes[0].NodePool)
	all, _, err := pools.ListNodes("all", nil)
	require.NoError(t, err)
	require.Len(t, all, 2)
	jobs, _, err := pools.ListJobs("dev", nil)
	require.NoError(t, err)
	require.Len(t, jobs, 1)
	require.Equal(t, "web", jobs[0].ID)
	defJobs, _, err := pools.ListJobs("default", nil)
	require.NoError(t, err)
	require.Len(t, defJobs, 1)
	require.Equal(t, "api", defJobs[0].ID)
	// Nomad's client has no JobListStub.NodePool; its server, and troupe, send it.
	_, raw, _ := do(t, b, http.MethodGet, "/v1/node/pool/dev/jobs", "", nil)
	require.Contains(t, raw, `"NodePool":"dev"`)

	_, err = pools.Delete("dev", nil)
	require.Equal(t, http.StatusConflict, statusOf(t, err))
	require.ErrorContains(t, err, `node pool "dev" has 1 node`)
	require.ErrorContains(t, err, `node pool "dev" has non-terminal jobs: default/web`)
	_, err = pools.Delete("devx", nil)
	require.NoError(t, err)
	_, _, err = pools.Info("devx", nil)
	require.Equal(t, http.StatusNotFound, statusOf(t, err))
}

func TestNodePoolRefusals(t *testing.T) {
	b := newFSMBackend()
	c := nomadAgainst(t, b)
	pools := c.NodePools()
	tests := []struct {
		name string
		call func() error
		code int
		text string
	}{
		{"modify default", func() error {
			_, err := pools.Register(&nomad.NodePool{Name: "default", Description: "x"}, nil)
			return err
		},
			http.StatusBadRequest, `modifying node pool "default" is not allowed`},
		{"modify all", func() error { _, err := pools.Register(&nomad.NodePool{Name: "all"}, nil); return err },
			http.StatusBadRequest, `modifying node pool "all" is not allowed`},
		{"bad name", func() error { _, err := pools.Register(&nomad.NodePool{Name: "a b"}, nil); return err },
			http.StatusBadRequest, `invalid name "a b"`},
		{"long description", func() error {
			_, err := pools.Register(&nomad.NodePool{Name: "x", Description: strings.Repeat("d", 257)}, nil)
			return err
		}, http.StatusBadRequest, "description longer than 256"},
		{"scheduler configuration", func() error {
			_, err := pools.Register(&nomad.NodePool{Name: "x", SchedulerConfiguration: &nomad.NodePoolSchedulerConfiguration{
				SchedulerAlgorithm: nomad.SchedulerAlgorithmSpread}}, nil)
			return err
		}, http.StatusBadRequest, "SchedulerConfiguration is not supported"},
		{"node identity TTL", func() error {
			_, err := pools.Register(&nomad.NodePool{Name: "x", NodeIdentityTTL: time.Hour}, nil)
			return err
		}, http.StatusBadRequest, "NodeIdentityTTL is not supported"},
		{"delete default", func() error { _, err := pools.Delete("default", nil); return err },
			http.StatusBadRequest, `deleting node pool "default" is not allowed`},
		{"delete all", func() error { _, err := pools.Delete("all", nil); return err },
			http.StatusBadRequest, `deleting node pool "all" is not allowed`},
		{"delete unknown", func() error { _, err := pools.Delete("nope", nil); return err },
			http.StatusNotFound, `node pool "nope" not found`},
		{"delete bad name", func() error { _, err := pools.Delete("a.b", nil); return err },
			http.StatusBadRequest, `invalid name "a.b"`},
		{"info unknown", func() error { _, _, err := pools.Info("nope", nil); return err },
			http.StatusNotFound, `node pool not found: "nope"`},
		{"info bad name", func() error { _, _, err := pools.Info("a.b", nil); return err },
			http.StatusBadRequest, `invalid name`},
		{"nodes of unknown", func() error { _, _, err := pools.ListNodes("nope", nil); return err },
			http.StatusNotFound, `node pool not found`},
		{"jobs of unknown", func() error { _, _, err := pools.ListJobs("nope", nil); return err },
			http.StatusNotFound, `node pool not found`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			before := b.Store().Snapshot()
			err := tt.call()
			require.Equal(t, tt.code, statusOf(t, err))
			require.ErrorContains(t, err, tt.text)
			after := b.Store().Snapshot()
			require.Equal(t, before.Index(), after.Index(), "nothing changed")
			require.Len(t, after.NodePools(), 2)
		})
	}
}

func TestNodePoolBodies(t *testing.T) {
	tests := []struct {
		name, body string
		code       int
		text       string
	}{
		{"not JSON", `{`, http.StatusBadRequest, "invalid node pool"},
		{"duplicate key", `{"Name":"a","Name":"b"}`, http.StatusBadRequest, "invalid node pool"},
		{"empty body", ``, http.StatusBadRequest, "invalid node pool"},
		{"no name", `{"Description":"x"}`, http.StatusBadRequest, `invalid name ""`},
		{"indexes are the server's", `{"Name":"x","CreateIndex":99,"ModifyIndex":99}`, http.StatusOK, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			b := newFSMBackend()
			code, body, _ := do(t, b, http.MethodPut, "/v1/node/pools", tt.body, nil)
			require.Equal(t, tt.code, code, body)
			require.Contains(t, body, tt.text)
			if code == http.StatusOK {
				require.Equal(t, uint64(1), b.Store().Snapshot().NodePoolByName("x").CreateIndex)
			}
		})
	}
}

func TestNodePoolsBlockingQuery(t *testing.T) {
	b := newFSMBackend()
	c := nomadAgainst(t, b)
	_, meta, err := c.NodePools().List(nil)
	require.NoError(t, err)
	done := make(chan []*nomad.NodePool, 1)
	go func() {
		list, _, err := c.NodePools().List(&nomad.QueryOptions{WaitIndex: meta.LastIndex, WaitTime: time.Minute})
		if err != nil {
			list = nil
		}
		done <- list
	}()
	// The query waits for a change: node changes do not wake it ...
	b.mustApply(t, poolNode("n1", "default"))
	select {
	case <-done:
		t.Fatal("a node registration in an existing pool woke a node pool query")
	default:
	}
	// ... a new pool does.
	b.mustApply(t, poolNode("n2", "fresh"))
	require.Equal(t, []string{"all", "default", "fresh"}, names(<-done))
}

func TestJobInUnknownPoolIsRefused(t *testing.T) {
	b := newFSMBackend()
	c := nomadAgainst(t, b)
	job := nomad.NewServiceJob("web", "web", "global", 50)
	job.NodePool = ptrTo("nope")
	job.AddTaskGroup(nomad.NewTaskGroup("g", 1).AddTask(nomad.NewTask("t", "exec").SetConfig("command", "/bin/true")))
	_, _, err := c.Jobs().Register(job, nil)
	require.Equal(t, http.StatusBadRequest, statusOf(t, err))
	require.ErrorContains(t, err, `job "web" is in nonexistent node pool "nope"`)
	require.Empty(t, b.Store().Snapshot().Jobs())

	job.NodePool = nil
	_, _, err = c.Jobs().Register(job, nil)
	require.NoError(t, err)
	got, _, err := c.Jobs().Info("web", nil)
	require.NoError(t, err)
	require.Equal(t, "default", *got.NodePool)
}

func TestNodeSubresources(t *testing.T) {
	b := newFSMBackend()
	b.mustApply(t, poolNode("n1", ""))
	code, body, _ := do(t, b, http.MethodGet, "/v1/node/n1/allocations", "", nil)
	require.Equal(t, http.StatusOK, code, body)
	code, _, _ = do(t, b, http.MethodGet, "/v1/node/n1/nothing", "", nil)
	require.Equal(t, http.StatusNotFound, code)
	// As in Nomad, /v1/node/pool/<name> is a pool, whatever its name.
	code, body, _ = do(t, b, http.MethodGet, "/v1/node/pool/allocations", "", nil)
	require.Equal(t, http.StatusNotFound, code)
	require.Contains(t, body, `node pool not found: "allocations"`)
}

func ptrTo[T any](v T) *T { return &v }
