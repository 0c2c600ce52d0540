package httpapi

import (
	"context"
	"net/http"
	"testing"

	nomad "github.com/hashicorp/nomad/api"
	"github.com/stretchr/testify/require"

	"github.com/troupe-dev/troupe/messages"
)

// TestWildcardNamespaceNamesNoObject: "*" lists, but an endpoint that
// reads or writes one namespace's job, volume or variable refuses it with
// a 400 that says so, and changes nothing.
func TestWildcardNamespaceNamesNoObject(t *testing.T) {
	b := newFSMBackend()
	c := nomadAgainst(t, b)
	_, _, err := c.Jobs().Register(nsJob("web"), nil)
	require.NoError(t, err)
	for _, tt := range []struct{ method, path, body string }{
		{http.MethodGet, "/v1/job/web", ""},
		{http.MethodGet, "/v1/job/web/allocations", ""},
		{http.MethodGet, "/v1/job/web/evaluations", ""},
		{http.MethodGet, "/v1/job/web/summary", ""},
		{http.MethodGet, "/v1/job/web/versions", ""},
		{http.MethodDelete, "/v1/job/web", ""},
		{http.MethodPut, "/v1/jobs", `{"Job":{"ID":"x"}}`},
		{http.MethodGet, "/v1/volume/csi/v1", ""},
		{http.MethodDelete, "/v1/volume/csi/v1", ""},
		{http.MethodGet, "/v1/var/a/b", ""},
		{http.MethodPut, "/v1/var/a/b", `{"Items":{"k":"v"}}`},
		{http.MethodDelete, "/v1/var/a/b", ""},
	} {
		t.Run(tt.method+" "+tt.path, func(t *testing.T) {
			before := b.Store().Snapshot().Index()
			code, out, _ := do(t, b, tt.method, tt.path+"?namespace=*", tt.body, nil)
			require.Equal(t, http.StatusBadRequest, code, out)
			require.Contains(t, out, `namespace "*" names every namespace`)
			require.Equal(t, before, b.Store().Snapshot().Index())
		})
	}
	j, _, err := c.Jobs().Info("web", nil)
	require.NoError(t, err)
	require.Equal(t, "default", *j.Namespace, "the refused deregister left it")
}

// TestRequestNamespaceWins: as in Nomad, a write's ?namespace= (Nomad's
// WriteOptions.Namespace) places the job, over the namespace in its body.
func TestRequestNamespaceWins(t *testing.T) {
	b := newFSMBackend()
	c := nomadAgainst(t, b)
	_, err := c.Namespaces().Register(&nomad.Namespace{Name: "prod"}, nil)
	require.NoError(t, err)
	job := nsJob("web")
	def := "default"
	job.Namespace = &def
	_, _, err = c.Jobs().Register(job, &nomad.WriteOptions{Namespace: "prod"})
	require.NoError(t, err)
	require.NotNil(t, b.Store().Snapshot().JobByID("prod", "web"))
	require.Nil(t, b.Store().Snapshot().JobByID("default", "web"))
}

// TestVolumeOpsInAnotherNamespaceAre404: deregister, detach and delete of
// a volume that is not in the request's namespace are 404s that never
// reach the volume manager.
func TestVolumeOpsInAnotherNamespaceAre404(t *testing.T) {
	for _, target := range []string{
		"/v1/volume/csi/vol1?namespace=prod",
		"/v1/volume/csi/vol1/detach?node=n1&namespace=prod",
		"/v1/volume/csi/vol1/delete?namespace=prod",
		"/v1/volume/csi/nope",
	} {
		t.Run(target, func(t *testing.T) {
			f := &fakeBackend{}
			code, out, _ := do(t, f, http.MethodDelete, target, "", nil)
			require.Equal(t, http.StatusNotFound, code, out)
			require.Contains(t, out, "volume not found")
			require.Empty(t, f.sent())
		})
	}
	f := &fakeBackend{}
	code, out, _ := do(t, f, http.MethodDelete, "/v1/volume/csi/vol1?namespace=default", "", nil)
	require.Equal(t, http.StatusOK, code, out)
	require.Len(t, f.sent(), 1)
}

// deletingBackend deletes namespace ns just before it commits a job's
// registration: the race in which the API's own check passed and the
// FSM's refuses.
type deletingBackend struct {
	*fsmBackend
	ns string
}

func (d *deletingBackend) Apply(ctx context.Context, cmd *messages.Command) (any, uint64, error) {
	if _, ok := cmd.GetCmd().(*messages.Command_RegisterJob); ok {
		if _, _, err := d.fsmBackend.Apply(ctx, &messages.Command{Cmd: &messages.Command_DeleteNamespaces{
			DeleteNamespaces: &messages.DeleteNamespaces{Names: []string{d.ns}}}}); err != nil {
			return nil, 0, err
		}
	}
	return d.fsmBackend.Apply(ctx, cmd)
}

func TestRegisterRacingNamespaceDeleteIs400(t *testing.T) {
	b := &deletingBackend{fsmBackend: newFSMBackend(), ns: "prod"}
	c := nomadAgainst(t, b)
	_, err := c.Namespaces().Register(&nomad.Namespace{Name: "prod"}, nil)
	require.NoError(t, err)
	_, _, err = c.Jobs().Register(nsJob("web"), &nomad.WriteOptions{Namespace: "prod"})
	require.Error(t, err)
	require.Contains(t, err.Error(), "400")
	require.Contains(t, err.Error(), `namespace "prod" does not exist: job "web" cannot be in it`)
	require.Empty(t, b.Store().Snapshot().Jobs())
}
