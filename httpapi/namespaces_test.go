package httpapi

import (
	"net/http"
	"strings"
	"testing"

	nomad "github.com/hashicorp/nomad/api"
	"github.com/stretchr/testify/require"
)

func namespaceNames(nss []*nomad.Namespace) []string {
	var out []string
	for _, ns := range nss {
		out = append(out, ns.Name)
	}
	return out
}

func nsJob(id string) *nomad.Job {
	job := nomad.NewServiceJob(id, id, "global", 50)
	job.AddTaskGroup(nomad.NewTaskGroup("g", 1).AddTask(nomad.NewTask("t", "exec").SetConfig("command", "/bin/true")))
	return job
}

func TestNamespacesWithNomadClient(t *testing.T) {
	b := newFSMBackend()
	c := nomadAgainst(t, b)
	nss := c.Namespaces()

	list, meta, err := nss.List(nil)
	require.NoError(t, err)
	require.Equal(t, []string{"default"}, namespaceNames(list))
	require.NotEmpty(t, list[0].Description)
	require.NotZero(t, meta.LastIndex)

	wm, err := nss.Register(&nomad.Namespace{Name: "prod", Description: "Production", Meta: map[string]string{"team": "sre"}}, nil)
	require.NoError(t, err)
	require.NotZero(t, wm.LastIndex)
	prod, _, err := nss.Info("prod", nil)
	require.NoError(t, err)
	require.Equal(t, "Production", prod.Description)
	require.Equal(t, map[string]string{"team": "sre"}, prod.Meta)
	require.Equal(t, wm.LastIndex, prod.CreateIndex)

	_, err = nss.Register(&nomad.Namespace{Name: "prod", Description: "changed"}, nil)
	require.NoError(t, err)
	prod2, _, err := nss.Info("prod", nil)
	require.NoError(t, err)
	require.Equal(t, "changed", prod2.Description)
	require.Equal(t, prod.CreateIndex, prod2.CreateIndex)
	require.Greater(t, prod2.ModifyIndex, prod.ModifyIndex)

	_, err = nss.Register(&nomad.Namespace{Name: "prodx"}, nil)
	require.NoError(t, err)
	prefixed, _, err := nss.PrefixList("prod", nil)
	require.NoError(t, err)
	require.ElementsMatch(t, []string{"prod", "prodx"}, namespaceNames(prefixed))

	_, err = nss.Delete("prodx", nil)
	require.NoError(t, err)
	_, _, err = nss.Info("prodx", nil)
	require.Equal(t, http.StatusNotFound, statusOf(t, err))
}

func TestNamespaceRefusals(t *testing.T) {
	b := newFSMBackend()
	c := nomadAgainst(t, b)
	nss := c.Namespaces()
	_, err := nss.Register(&nomad.Namespace{Name: "prod"}, nil)
	require.NoError(t, err)
	_, _, err = c.Jobs().Register(nsJob("web"), &nomad.WriteOptions{Namespace: "prod"})
	require.NoError(t, err)
	tests := []struct {
		name string
		call func() error
		code int
		text string
	}{
		{"bad name", func() error { _, err := nss.Register(&nomad.Namespace{Name: "a_b"}, nil); return err },
			http.StatusBadRequest, `invalid name "a_b"`},
		{"long description", func() error {
			_, err := nss.Register(&nomad.Namespace{Name: "x", Description: strings.Repeat("d", 257)}, nil)
			return err
		}, http.StatusBadRequest, "description longer than 256"},
		{"quota", func() error { _, err := nss.Register(&nomad.Namespace{Name: "x", Quota: "q"}, nil); return err },
			http.StatusBadRequest, "Namespace.Quota is not supported"},
		{"capabilities", func() error {
			_, err := nss.Register(&nomad.Namespace{Name: "x", Capabilities: &nomad.NamespaceCapabilities{}}, nil)
			return err
		}, http.StatusBadRequest, "Namespace.Capabilities is not supported"},
		{"delete default", func() error { _, err := nss.Delete("default", nil); return err },
			http.StatusBadRequest, `deleting namespace "default" is not allowed`},
		{"delete unknown", func() error { _, err := nss.Delete("nope", nil); return err },
			http.StatusNotFound, `namespace "nope" not found`},
		{"delete with a job", func() error { _, err := nss.Delete("prod", nil); return err },
			http.StatusConflict, `namespace "prod" has non-terminal jobs: web`},
		{"info unknown", func() error { _, _, err := nss.Info("nope", nil); return err },
			http.StatusNotFound, `namespace not found: "nope"`},
		{"job in a missing namespace", func() error {
			_, _, err := c.Jobs().Register(nsJob("api"), &nomad.WriteOptions{Namespace: "nope"})
			return err
		}, http.StatusBadRequest, `namespace "nope" does not exist: job "api" cannot be in it`},
		{"plan in a missing namespace", func() error {
			job := nsJob("api")
			job.Namespace = ptrTo("nope")
			_, _, err := c.Jobs().Plan(job, false, nil)
			return err
		}, http.StatusBadRequest, `namespace "nope" does not exist`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			before := b.Store().Snapshot()
			err := tt.call()
			require.Equal(t, tt.code, statusOf(t, err))
			require.ErrorContains(t, err, tt.text)
			after := b.Store().Snapshot()
			require.Equal(t, before.Index(), after.Index(), "nothing changed")
			require.Len(t, after.Namespaces(), 2)
		})
	}
}

func TestNamespaceBodies(t *testing.T) {
	tests := []struct {
		name, path, body string
		code             int
		text             string
	}{
		{"not JSON", "/v1/namespace", `{`, http.StatusBadRequest, "invalid namespace"},
		{"duplicate key", "/v1/namespace", `{"Name":"a","Name":"b"}`, http.StatusBadRequest, "invalid namespace"},
		{"no name", "/v1/namespace", `{"Description":"x"}`, http.StatusBadRequest, `invalid name ""`},
		{"name from the URL", "/v1/namespace/x", `{"Description":"d"}`, http.StatusOK, ""},
		{"URL and body disagree", "/v1/namespace/x", `{"Name":"y"}`, http.StatusBadRequest, `"y" does not match the URL's "x"`},
		{"null blocks are unset", "/v1/namespace", `{"Name":"x","Capabilities":null,"Quota":""}`, http.StatusOK, ""},
		{"indexes are the server's", "/v1/namespace", `{"Name":"x","CreateIndex":99,"ModifyIndex":99}`, http.StatusOK, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			b := newFSMBackend()
			code, body, _ := do(t, b, http.MethodPut, tt.path, tt.body, nil)
			require.Equal(t, tt.code, code, body)
			require.Contains(t, body, tt.text)
			if code == http.StatusOK {
				require.Equal(t, uint64(1), b.Store().Snapshot().NamespaceByName("x").CreateIndex)
			}
		})
	}
}

func TestListsByNamespace(t *testing.T) {
	b := newFSMBackend()
	c := nomadAgainst(t, b)
	_, err := c.Namespaces().Register(&nomad.Namespace{Name: "prod"}, nil)
	require.NoError(t, err)
	_, _, err = c.Jobs().Register(nsJob("web"), nil)
	require.NoError(t, err)
	_, _, err = c.Jobs().Register(nsJob("api"), &nomad.WriteOptions{Namespace: "prod"})
	require.NoError(t, err)
	for _, tt := range []struct {
		namespace string
		want      []string
	}{
		{"", []string{"web"}},
		{"default", []string{"web"}},
		{"prod", []string{"api"}},
		{"*", []string{"api", "web"}},
		{"nope", nil},
	} {
		t.Run("namespace="+tt.namespace, func(t *testing.T) {
			q := &nomad.QueryOptions{Namespace: tt.namespace}
			jobs, _, err := c.Jobs().List(q)
			require.NoError(t, err)
			var ids []string
			for _, j := range jobs {
				ids = append(ids, j.ID)
			}
			require.ElementsMatch(t, tt.want, ids)
			evals, _, err := c.Evaluations().List(q)
			require.NoError(t, err)
			var jobIDs []string
			for _, e := range evals {
				jobIDs = append(jobIDs, e.JobID)
			}
			require.ElementsMatch(t, tt.want, jobIDs, "evaluations")
		})
	}
	got, _, err := c.Jobs().Info("api", &nomad.QueryOptions{Namespace: "prod"})
	require.NoError(t, err)
	require.Equal(t, "prod", *got.Namespace)
}

func TestVolumeInMissingNamespaceIsRefused(t *testing.T) {
	b := newFSMBackend()
	body := `{"Volumes":[{"ID":"v1","Name":"v1","Namespace":"nope","PluginID":"hostpath","ExternalID":"e1",` +
		`"RequestedCapabilities":[{"AccessMode":"single-node-writer","AttachmentMode":"file-system"}]}]}`
	code, out, _ := do(t, b, http.MethodPut, "/v1/volume/csi/v1", body, nil)
	require.Equal(t, http.StatusBadRequest, code, out)
	require.Contains(t, out, `namespace "nope" does not exist: volume "v1" cannot be in it`)
	require.Empty(t, b.Store().Snapshot().CSIVolumes())
}
