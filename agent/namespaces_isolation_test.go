package agent

import (
	"net/http"
	"testing"
	"time"

	nomad "github.com/hashicorp/nomad/api"
	"github.com/stretchr/testify/require"
)

// nsClient is Nomad's client for the agent, configured for namespace ns.
func nsClient(t *testing.T, a *Agent, ns string) *nomad.Client {
	t.Helper()
	c, err := nomad.NewClient(&nomad.Config{Address: "http://" + a.HTTPAddr(), Namespace: ns})
	require.NoError(t, err)
	return c
}

// TestSameJobIDInTwoNamespaces drives a dev agent with Nomad's own client:
// job "web" in namespaces blue and green lives twice, independently (its
// allocations, evaluations, versions); "*" lists both; a read in a
// namespace that does not hold it is a 404; stopping one leaves the
// other; a volume belongs to one namespace; a namespace holding a job or
// a volume cannot be deleted, and the refusal names them.
func TestSameJobIDInTwoNamespaces(t *testing.T) {
	a := startAgent(t, testConfig(t, t.TempDir()))
	defer a.Shutdown()
	c := nsClient(t, a, "")
	for _, ns := range []string{"blue", "green"} {
		_, err := c.Namespaces().Register(&nomad.Namespace{Name: ns}, nil)
		require.NoError(t, err)
	}
	blue, green := nsClient(t, a, "blue"), nsClient(t, a, "green")

	for _, ns := range []string{"blue", "green"} {
		_, _, err := c.Jobs().Register(poolJob("web", ""), &nomad.WriteOptions{Namespace: ns})
		require.NoError(t, err)
	}
	blueAlloc := waitAllocStatus(t, blue, "web", "running")
	greenAlloc := waitAllocStatus(t, green, "web", "running")
	require.NotEqual(t, blueAlloc.ID, greenAlloc.ID)
	require.Equal(t, "blue", blueAlloc.Namespace)
	require.Equal(t, "green", greenAlloc.Namespace)

	for ns, cl := range map[string]*nomad.Client{"blue": blue, "green": green} {
		j, _, err := cl.Jobs().Info("web", nil)
		require.NoError(t, err)
		require.Equal(t, ns, *j.Namespace)
		evals, _, err := cl.Jobs().Evaluations("web", nil)
		require.NoError(t, err)
		require.NotEmpty(t, evals)
		for _, e := range evals {
			require.Equal(t, ns, e.Namespace, "job %s/web's evaluations are its own", ns)
		}
		allocs, _, err := cl.Jobs().Allocations("web", false, nil)
		require.NoError(t, err)
		require.Len(t, allocs, 1)
		require.Equal(t, ns, allocs[0].Namespace)
	}

	// "*" lists both; default holds neither.
	jobs, _, err := c.Jobs().List(&nomad.QueryOptions{Namespace: "*"})
	require.NoError(t, err)
	var names []string
	for _, j := range jobs {
		names = append(names, j.Namespace+"/"+j.ID)
	}
	require.ElementsMatch(t, []string{"blue/web", "green/web"}, names)
	allocs, _, err := c.Allocations().List(&nomad.QueryOptions{Namespace: "*"})
	require.NoError(t, err)
	require.Len(t, allocs, 2)
	evals, _, err := c.Evaluations().List(&nomad.QueryOptions{Namespace: "*"})
	require.NoError(t, err)
	require.GreaterOrEqual(t, len(evals), 2)
	for _, q := range []*nomad.QueryOptions{nil, {Namespace: "default"}, {Namespace: "red"}} {
		_, _, err = c.Jobs().Info("web", q)
		require.Equal(t, http.StatusNotFound, statusCode(t, err), "%+v", q)
		_, _, err = c.Jobs().Summary("web", q)
		require.Equal(t, http.StatusNotFound, statusCode(t, err))
	}
	_, _, err = c.Jobs().Info("web", &nomad.QueryOptions{Namespace: "*"})
	require.Equal(t, http.StatusBadRequest, statusCode(t, err), "one job is read in one namespace")
	// An allocation is named by its UUID: as in Nomad, found from any
	// namespace.
	got, _, err := c.Allocations().Info(blueAlloc.ID, nil)
	require.NoError(t, err)
	require.Equal(t, "blue", got.Namespace)

	// A job in a namespace that does not exist.
	_, _, err = c.Jobs().Register(poolJob("web", ""), &nomad.WriteOptions{Namespace: "red"})
	require.Equal(t, http.StatusBadRequest, statusCode(t, err))
	require.ErrorContains(t, err, `namespace "red" does not exist`)

	// A volume in green.
	vol := &nomad.CSIVolume{ID: "vol1", Name: "vol1", ExternalID: "ext-1", PluginID: "hostpath",
		RequestedCapabilities: []*nomad.CSIVolumeCapability{{AccessMode: "single-node-writer", AttachmentMode: "file-system"}}}
	_, err = green.CSIVolumes().Register(vol, nil)
	require.NoError(t, err)
	gv, _, err := green.CSIVolumes().Info("vol1", nil)
	require.NoError(t, err)
	require.Equal(t, "green", gv.Namespace)
	_, _, err = blue.CSIVolumes().Info("vol1", nil)
	require.Equal(t, http.StatusNotFound, statusCode(t, err))
	err = blue.CSIVolumes().Deregister("vol1", false, nil)
	require.Equal(t, http.StatusNotFound, statusCode(t, err), "a deregister in another namespace finds no volume")
	vols, _, err := c.CSIVolumes().List(&nomad.QueryOptions{Namespace: "*"})
	require.NoError(t, err)
	require.Len(t, vols, 1)

	// A variable in green: the same path in blue is another (none).
	_, _, err = green.Variables().Create(&nomad.Variable{Path: "app/db", Items: nomad.VariableItems{"k": "v"}}, nil)
	require.NoError(t, err)
	_, _, err = blue.Variables().Read("app/db", nil)
	require.ErrorIs(t, err, nomad.ErrVariablePathNotFound)
	gvar, _, err := green.Variables().Read("app/db", nil)
	require.NoError(t, err)
	require.Equal(t, "v", gvar.Items["k"])

	// green holds a job, a volume and a variable: its delete names them.
	_, err = c.Namespaces().Delete("green", nil)
	require.Equal(t, http.StatusConflict, statusCode(t, err))
	require.ErrorContains(t, err, `namespace "green" has non-terminal jobs: web`)
	require.ErrorContains(t, err, `namespace "green" has volumes: vol1`)
	require.ErrorContains(t, err, `namespace "green" has 1 variable(s)`)

	// Stopping blue/web leaves green/web running.
	_, _, err = blue.Jobs().Deregister("web", false, nil)
	require.NoError(t, err)
	require.Eventually(t, func() bool {
		j, _, err := blue.Jobs().Info("web", nil)
		return err == nil && *j.Status == "dead"
	}, 20*time.Second, 20*time.Millisecond)
	waitAllocStatus(t, blue, "web", "complete")
	gj, _, err := green.Jobs().Info("web", nil)
	require.NoError(t, err)
	require.False(t, *gj.Stop)
	ga, _, err := green.Allocations().Info(greenAlloc.ID, nil)
	require.NoError(t, err)
	require.Equal(t, "running", ga.ClientStatus)
	require.Equal(t, "run", ga.DesiredStatus)

	// blue's job is dead: blue goes; green stays.
	_, err = c.Namespaces().Delete("blue", nil)
	require.NoError(t, err)
	nss, _, err := c.Namespaces().List(nil)
	require.NoError(t, err)
	var left []string
	for _, ns := range nss {
		left = append(left, ns.Name)
	}
	require.ElementsMatch(t, []string{"default", "green"}, left)
}
