//go:build linux

package agent

import (
	"path/filepath"
	"strings"
	"testing"
	"time"

	nomad "github.com/hashicorp/nomad/api"
	"github.com/stretchr/testify/require"
)

// TestTemplateSourceFromArtifact: a template whose source is a file an
// artifact fetched renders, as in Nomad, because the task renders its
// templates after its artifacts: the artifact comes from the test's HTTP
// server, the template reads it from local/ and renders a variable and
// the task's env into local/out.conf, which the task prints.
func TestTemplateSourceFromArtifact(t *testing.T) {
	needCgroups(t)
	tpl := []byte(`name={{ env "NOMAD_TASK_NAME" }} k={{ with nomadVar "nomad/jobs/srcart" }}{{ .k }}{{ end }}`)
	srv, gets := artifactServer(t, map[string][]byte{"/out.tpl": tpl})
	a, c := rawExecAgent(t)
	_, _, err := c.Variables().Create(&nomad.Variable{Path: "nomad/jobs/srcart", Items: nomad.VariableItems{"k": "from-var"}}, nil)
	require.NoError(t, err)

	job := artifactJob("srcart", `cat "$NOMAD_TASK_DIR/out.conf"`,
		&nomad.TaskArtifact{GetterSource: ptr(srv.URL + "/out.tpl"), GetterOptions: map[string]string{"checksum": sha256Of(tpl)}})
	job.TaskGroups[0].Tasks[0].Templates = []*nomad.Template{{SourcePath: ptr("local/out.tpl"), DestPath: ptr("local/out.conf")}}
	_, _, err = c.Jobs().Register(job, nil)
	require.NoError(t, err)
	stub := waitAllocStatus(t, c, "srcart", "complete")
	require.Equal(t, "name=t k=from-var", readLog(filepath.Join(a.AllocDir(), stub.ID, "alloc", "logs", "t.stdout")))
	require.Equal(t, int32(1), gets["/out.tpl"].Load())
	alloc, _, err := c.Allocations().Info(stub.ID, nil)
	require.NoError(t, err)
	types := eventTypes(alloc.TaskStates["t"])
	require.Less(t, indexOf(types, "Downloading Artifacts"), indexOf(types, "Started"), "%v", types)
	require.False(t, alloc.TaskStates["t"].Failed)
}

// TestTemplateRestartTakesNewEnv: a task restarted by a change of its env
// template (change_mode restart, env = true) runs with the re-rendered
// variables: the real task prints its environment at each start.
func TestTemplateRestartTakesNewEnv(t *testing.T) {
	needCgroups(t)
	a, c := rawExecAgent(t)
	setVar := func(user string) {
		t.Helper()
		_, _, err := c.Variables().Update(&nomad.Variable{Path: "nomad/jobs/envrs", Items: nomad.VariableItems{"user": user}}, nil)
		require.NoError(t, err)
	}
	setVar("ada")
	job := rawExecJob("envrs", `echo "start DB_USER=$DB_USER"; while true; do sleep 0.05; done`)
	splay := time.Nanosecond
	job.TaskGroups[0].Tasks[0].Templates = []*nomad.Template{{
		EmbeddedTmpl: ptr("DB_USER={{ with nomadVar \"nomad/jobs/envrs\" }}{{ .user }}{{ end }}\n"), DestPath: ptr("secrets/db.env"),
		Envvars: ptr(true), ChangeMode: ptr("restart"), Splay: &splay}}
	_, _, err := c.Jobs().Register(job, nil)
	require.NoError(t, err)
	stub := waitAllocStatus(t, c, "envrs", "running")
	logBase := filepath.Join(a.AllocDir(), stub.ID, "alloc", "logs", "t.stdout")
	waitLog := func(want string) {
		t.Helper()
		require.Eventually(t, func() bool { return strings.Contains(readLog(logBase), want) }, 20*time.Second, 20*time.Millisecond,
			"the task never printed %q: %s", want, readLog(logBase))
	}
	waitLog("start DB_USER=ada\n")
	setVar("bob")
	waitLog("start DB_USER=bob\n")
	setVar("cy")
	waitLog("start DB_USER=cy\n")
	require.Equal(t, 3, strings.Count(readLog(logBase), "start "), "%s", readLog(logBase))
}
