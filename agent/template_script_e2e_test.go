//go:build linux

package agent

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	nomad "github.com/hashicorp/nomad/api"
	"github.com/stretchr/testify/require"
)

// scriptJob is a raw_exec service whose one template, reading the
// variable at path, has change_mode script with the given script.
func scriptJob(id, path string, script *nomad.ChangeScript) *nomad.Job {
	job := rawExecJob(id, `while true; do sleep 0.05; done`)
	job.TaskGroups[0].RestartPolicy = &nomad.RestartPolicy{Attempts: ptr(0), Mode: ptr("fail")}
	job.TaskGroups[0].ReschedulePolicy = &nomad.ReschedulePolicy{Attempts: ptr(0), Unlimited: ptr(false)}
	splay := time.Nanosecond
	job.TaskGroups[0].Tasks[0].Templates = []*nomad.Template{{
		EmbeddedTmpl: ptr(`v={{ with nomadVar "` + path + `" }}{{ .v }}{{ end }}`), DestPath: ptr("local/v.conf"),
		ChangeMode: ptr("script"), ChangeScript: script, Splay: &splay}}
	return job
}

// TestTemplateChangeScript: a template with change_mode script runs its
// change_script in the task when it renders anew: a run that succeeds is
// a "Task hook message" event that says so and the task runs on; a run
// that fails with fail_on_error is a "Task hook failed" event and kills
// the task, failed; one that fails without it is only an event.
func TestTemplateChangeScript(t *testing.T) {
	needCgroups(t)
	_, c := rawExecAgent(t)
	setVar := func(path, v string) {
		t.Helper()
		_, _, err := c.Variables().Update(&nomad.Variable{Path: path, Items: nomad.VariableItems{"v": v}}, nil)
		require.NoError(t, err)
	}
	marks := filepath.Join(t.TempDir(), "reloads")
	for _, p := range []string{"nomad/jobs/ok", "nomad/jobs/bad", "nomad/jobs/soft"} {
		setVar(p, "1")
	}
	jobs := map[string]*nomad.Job{
		"ok": scriptJob("ok", "nomad/jobs/ok", &nomad.ChangeScript{Command: ptr("/bin/sh"),
			Args: []string{"-c", `echo reloaded >> ` + marks}, Timeout: ptr(5 * time.Second)}),
		"bad": scriptJob("bad", "nomad/jobs/bad", &nomad.ChangeScript{Command: ptr("/bin/sh"),
			Args: []string{"-c", "exit 3"}, FailOnError: ptr(true)}),
		"soft": scriptJob("soft", "nomad/jobs/soft", &nomad.ChangeScript{Command: ptr("/bin/sh"), Args: []string{"-c", "exit 4"}}),
	}
	for id, job := range jobs {
		_, _, err := c.Jobs().Register(job, nil)
		require.NoError(t, err)
		waitAllocStatus(t, c, id, "running")
	}
	events := func(id string) (*nomad.TaskState, []string) {
		stubs, _, err := c.Jobs().Allocations(id, false, nil)
		require.NoError(t, err)
		require.Len(t, stubs, 1)
		al, _, err := c.Allocations().Info(stubs[0].ID, nil)
		require.NoError(t, err)
		st := al.TaskStates["t"]
		var msgs []string
		for _, ev := range st.Events {
			msgs = append(msgs, ev.Type+": "+ev.DisplayMessage)
		}
		return st, msgs
	}
	waitEvent := func(id, want string) *nomad.TaskState {
		t.Helper()
		var st *nomad.TaskState
		var msgs []string
		require.Eventually(t, func() bool {
			st, msgs = events(id)
			return strings.Contains(strings.Join(msgs, "\n"), want)
		}, 20*time.Second, 50*time.Millisecond, "job %s: no event %q in %v", id, want, msgs)
		return st
	}

	setVar("nomad/jobs/ok", "2")
	st := waitEvent("ok", "Task hook message: Template successfully ran script /bin/sh with arguments: -c echo reloaded >> "+marks+". Exit code: 0")
	b, err := os.ReadFile(marks)
	require.NoError(t, err)
	require.Equal(t, "reloaded\n", string(b), "the script ran once")
	require.Equal(t, "running", st.State)
	require.Zero(t, st.Restarts)

	setVar("nomad/jobs/bad", "2")
	waitEvent("bad", "Task hook failed: Template script /bin/sh failed with error: exit code 3")
	waitAllocStatus(t, c, "bad", "failed")
	st, _ = events("bad")
	require.Equal(t, "dead", st.State)
	require.True(t, st.Failed, "fail_on_error fails the task")

	setVar("nomad/jobs/soft", "2")
	st = waitEvent("soft", "Task hook message: Template failed to run script /bin/sh with arguments -c exit 4 on change: <nil> Exit code: 4")
	require.Equal(t, "running", st.State, "without fail_on_error the task runs on")
}
