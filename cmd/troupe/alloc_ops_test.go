package main

import (
	"testing"

	"github.com/stretchr/testify/require"
)

func TestAllocSignal(t *testing.T) {
	cases := []struct {
		name string
		args []string
		body string
		out  string
	}{
		{"named by argument", []string{"-s", "SIGUSR1", "a1a1", "server"}, `{"Task":"server","Signal":"SIGUSR1"}`,
			`Sent SIGUSR1 to task "server" of allocation a1a1a1a1`},
		{"-task wins over the argument", []string{"-s", "HUP", "-task", "server", "a1a1", "other"}, `{"Task":"server","Signal":"HUP"}`,
			`Sent HUP to task "server"`},
		{"every task, SIGKILL by default", []string{"a1a1"}, `{"Task":"","Signal":"SIGKILL"}`,
			"Sent SIGKILL to every running task of allocation a1a1a1a1"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			f := newFakeAPI(t)
			f.allocs[allocID] = sampleAlloc()
			code, out, errOut := f.runCLI(append([]string{"alloc", "signal"}, c.args...)...)
			require.Equal(t, 0, code, errOut)
			require.Contains(t, out, c.out)
			calls := f.callsTo("POST", "/v1/client/allocation/"+allocID+"/signal")
			require.Len(t, calls, 1)
			require.JSONEq(t, c.body, calls[0].Body)
		})
	}
}

func TestAllocRestart(t *testing.T) {
	cases := []struct {
		name string
		args []string
		body string
		out  string
	}{
		{"one task", []string{"a1a1", "server"}, `{"TaskName":"server","AllTasks":false}`, `Restarted task "server" of allocation a1a1a1a1`},
		{"running tasks", []string{"a1a1"}, `{"TaskName":"","AllTasks":false}`, "Restarted every running task"},
		{"all tasks", []string{"-all-tasks", "a1a1"}, `{"TaskName":"","AllTasks":true}`, "Restarted every task"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			f := newFakeAPI(t)
			f.allocs[allocID] = sampleAlloc()
			code, out, errOut := f.runCLI(append([]string{"alloc", "restart"}, c.args...)...)
			require.Equal(t, 0, code, errOut)
			require.Contains(t, out, c.out)
			calls := f.callsTo("POST", "/v1/client/allocation/"+allocID+"/restart")
			require.Len(t, calls, 1)
			require.JSONEq(t, c.body, calls[0].Body)
		})
	}
}

func TestAllocSignalRestartRefusals(t *testing.T) {
	cases := []struct {
		name string
		args []string
		err  string
	}{
		{"unknown task", []string{"alloc", "signal", "a1a1", "nope"}, `has no task "nope"`},
		{"unknown alloc", []string{"alloc", "restart", "ffff"}, "querying allocation"},
		{"all tasks and a task", []string{"alloc", "restart", "-all-tasks", "a1a1", "server"}, "-all-tasks excludes"},
		{"no ID", []string{"alloc", "signal"}, "ID [TASK]"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			f := newFakeAPI(t)
			f.allocs[allocID] = sampleAlloc()
			code, _, errOut := f.runCLI(c.args...)
			require.Equal(t, 1, code)
			require.Contains(t, errOut, c.err)
			require.Empty(t, f.callsTo("POST", "/v1/client/allocation/"+allocID+"/signal"))
			require.Empty(t, f.callsTo("POST", "/v1/client/allocation/"+allocID+"/restart"))
		})
	}
}
