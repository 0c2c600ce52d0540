//go:build linux

package agent

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	nomad "github.com/hashicorp/nomad/api"
	"github.com/stretchr/testify/require"
)

// TestTemplatesThroughNomadClient: a job registered with Nomad's client
// whose task renders three templates from a variable: a file with
// change_mode restart, one with change_mode signal (SIGHUP) and an env
// template. The task starts with the rendered files and env; a change of
// the item the first reads restarts the task, a change of the one the
// others read signals it, without a restart; the files follow.
func TestTemplatesThroughNomadClient(t *testing.T) {
	needCgroups(t)
	a, c := rawExecAgent(t)
	var err error
	setVar := func(items nomad.VariableItems) {
		t.Helper()
		_, _, err := c.Variables().Update(&nomad.Variable{Path: "nomad/jobs/tmpl", Items: items}, nil)
		require.NoError(t, err)
	}
	setVar(nomad.VariableItems{"pass": "one", "user": "ada"})

	script := `trap 'echo "hup $(cat "$NOMAD_TASK_DIR/sig.conf")"' HUP
echo "start $(cat "$NOMAD_TASK_DIR/app.conf") env=$DB_USER"
while true; do sleep 0.05; done`
	job := rawExecJob("tmpl", script)
	splay := time.Nanosecond
	job.TaskGroups[0].Tasks[0].Templates = []*nomad.Template{
		{EmbeddedTmpl: ptr(`pass={{ with nomadVar "nomad/jobs/tmpl" }}{{ .pass }}{{ end }}`), DestPath: ptr("local/app.conf"),
			ChangeMode: ptr("restart"), Splay: &splay},
		{EmbeddedTmpl: ptr(`user={{ with nomadVar "nomad/jobs/tmpl" }}{{ .user }}{{ end }}`), DestPath: ptr("local/sig.conf"),
			ChangeMode: ptr("signal"), ChangeSignal: ptr("SIGHUP"), Splay: &splay, Perms: ptr("0600")},
		{EmbeddedTmpl: ptr("DB_USER={{ with nomadVar \"nomad/jobs/tmpl\" }}{{ .user }}{{ end }}\n"), DestPath: ptr("secrets/db.env"),
			Envvars: ptr(true), ChangeMode: ptr("noop"), Splay: &splay},
	}
	_, _, err = c.Jobs().Register(job, nil)
	require.NoError(t, err)
	stub := waitAllocStatus(t, c, "tmpl", "running")
	taskDir := filepath.Join(a.AllocDir(), stub.ID, "t")
	logBase := filepath.Join(a.AllocDir(), stub.ID, "alloc", "logs", "t.stdout")
	waitLog := func(want string) {
		t.Helper()
		require.Eventually(t, func() bool { return strings.Contains(readLog(logBase), want) }, 20*time.Second, 20*time.Millisecond,
			"the task never printed %q: %s", want, readLog(logBase))
	}
	waitLog("start pass=one env=ada\n")
	b, err := os.ReadFile(filepath.Join(taskDir, "local", "app.conf"))
	require.NoError(t, err)
	require.Equal(t, "pass=one", string(b))
	fi, err := os.Stat(filepath.Join(taskDir, "local", "sig.conf"))
	require.NoError(t, err)
	require.Equal(t, os.FileMode(0o600), fi.Mode().Perm())

	setVar(nomad.VariableItems{"pass": "two", "user": "ada"})
	waitLog("start pass=two env=ada\n")
	full, _, err := c.Allocations().Info(stub.ID, nil)
	require.NoError(t, err)
	var types []string
	for _, ev := range full.TaskStates["t"].Events {
		types = append(types, ev.Type)
	}
	require.Contains(t, types, "Restart Signaled", "change_mode restart restarts the task")

	setVar(nomad.VariableItems{"pass": "two", "user": "bob"})
	waitLog("hup user=bob\n")
	require.Equal(t, 2, strings.Count(readLog(logBase), "start "), "change_mode signal does not restart: %s", readLog(logBase))
	b, err = os.ReadFile(filepath.Join(taskDir, "secrets", "db.env"))
	require.NoError(t, err)
	require.Equal(t, "DB_USER=bob\n", string(b), "a noop template's file follows the variable too")
}

// TestTemplateWaitsForMissingVariable: a task whose template reads a
// variable that does not exist does not start until it is created.
func TestTemplateWaitsForMissingVariable(t *testing.T) {
	needCgroups(t)
	a, c := rawExecAgent(t)
	var err error
	job := rawExecJob("later", `cat "$NOMAD_TASK_DIR/x"; echo; while true; do sleep 0.05; done`)
	job.TaskGroups[0].Tasks[0].Templates = []*nomad.Template{{
		EmbeddedTmpl: ptr(`{{ with nomadVar "nomad/jobs/later" }}{{ .k }}{{ end }}`), DestPath: ptr("local/x")}}
	_, _, err = c.Jobs().Register(job, nil)
	require.NoError(t, err)
	stub := waitAllocStatus(t, c, "later", "pending")
	require.Never(t, func() bool {
		al, _, err := c.Allocations().Info(stub.ID, nil)
		return err == nil && al.ClientStatus != "pending"
	}, 2*time.Second, 50*time.Millisecond, "the task waits for its variable")
	_, _, err = c.Variables().Create(&nomad.Variable{Path: "nomad/jobs/later", Items: nomad.VariableItems{"k": "arrived"}}, nil)
	require.NoError(t, err)
	waitAllocStatus(t, c, "later", "running")
	logBase := filepath.Join(a.AllocDir(), stub.ID, "alloc", "logs", "t.stdout")
	require.Eventually(t, func() bool { return strings.Contains(readLog(logBase), "arrived\n") }, 20*time.Second, 20*time.Millisecond)
}

// TestTemplateFollowsServices: a template that reads nomadService renders
// the service's registered address and port, and renders again when the
// service goes.
func TestTemplateFollowsServices(t *testing.T) {
	needCgroups(t)
	needBusybox(t)
	a, c := rawExecAgent(t)
	var err error
	_, _, err = c.Jobs().Register(httpdJob("db", "tmpl-db", "true"), nil)
	require.NoError(t, err)
	regs := waitServices(t, c, "tmpl-db", 1)

	app := rawExecJob("app", `while true; do sleep 0.05; done`)
	splay := time.Nanosecond
	app.TaskGroups[0].Tasks[0].Templates = []*nomad.Template{{
		EmbeddedTmpl: ptr(`{{ range nomadService "tmpl-db" }}{{ .Address }}:{{ .Port }}{{ end }}`),
		DestPath:     ptr("local/db.addr"), ChangeMode: ptr("noop"), Splay: &splay}}
	_, _, err = c.Jobs().Register(app, nil)
	require.NoError(t, err)
	stub := waitAllocStatus(t, c, "app", "running")
	file := filepath.Join(a.AllocDir(), stub.ID, "t", "local", "db.addr")
	b, err := os.ReadFile(file)
	require.NoError(t, err)
	require.Equal(t, fmt.Sprintf("%s:%d", regs[0].Address, regs[0].Port), string(b))

	_, _, err = c.Jobs().Deregister("db", false, nil)
	require.NoError(t, err)
	require.Eventually(t, func() bool {
		b, err := os.ReadFile(file)
		return err == nil && len(b) == 0
	}, 20*time.Second, 20*time.Millisecond, "the template renders again without the service")
}
