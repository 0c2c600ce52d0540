package agent

import (
	"bytes"
	"context"
	"strings"
	"testing"
	"time"

	nomad "github.com/hashicorp/nomad/api"
	"github.com/stretchr/testify/require"
)

// TestNomadClientExecsIntoTask runs commands in a real exec task through
// Nomad's own Go client: its websocket framing, stdin, a pty and exit
// codes.
func TestNomadClientExecsIntoTask(t *testing.T) {
	a := startAgent(t, testConfig(t, t.TempDir()))
	defer a.Shutdown()
	c, err := nomad.NewClient(&nomad.Config{Address: "http://" + a.HTTPAddr()})
	require.NoError(t, err)

	job := nomad.NewServiceJob("ex", "ex", "global", 50)
	tg := nomad.NewTaskGroup("g", 1)
	task := nomad.NewTask("t", "exec").
		SetConfig("command", "/bin/sh").
		SetConfig("args", []string{"-c", "while true; do sleep 0.2; done"}).
		Require(&nomad.Resources{CPU: ptr(100), MemoryMB: ptr(64)})
	task.Env = map[string]string{"GREETING": "from-task-env"}
	task.KillTimeout = ptr(2 * time.Second)
	tg.AddTask(task)
	job.AddTaskGroup(tg)
	_, _, err = c.Jobs().Register(job, nil)
	require.NoError(t, err)
	stub := waitAllocStatus(t, c, "ex", "running")
	alloc, _, err := c.Allocations().Info(stub.ID, nil)
	require.NoError(t, err)

	exec := func(t *testing.T, task string, tty bool, stdin string, cmd ...string) (int, string, string, error) {
		t.Helper()
		ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
		defer cancel()
		var stdout, stderr bytes.Buffer
		code, err := c.Allocations().Exec(ctx, alloc, task, tty, cmd,
			strings.NewReader(stdin), &stdout, &stderr, nil, nil)
		return code, stdout.String(), stderr.String(), err
	}

	tests := []struct {
		name       string
		tty        bool
		stdin      string
		cmd        []string
		wantCode   int
		wantStdout string
		wantStderr string
	}{
		{name: "echo", cmd: []string{"echo", "hi"}, wantStdout: "hi\n"},
		{name: "exit code", cmd: []string{"sh", "-c", "echo bad >&2; exit 3"}, wantCode: 3, wantStderr: "bad\n"},
		{name: "task env", cmd: []string{"sh", "-c", `echo "$GREETING"`}, wantStdout: "from-task-env\n"},
		{name: "stdin", stdin: "fed\n", cmd: []string{"cat"}, wantStdout: "fed\n"},
		{name: "shell on a pty", tty: true, stdin: "echo $((1+2))\nexit\n", cmd: []string{"sh"}, wantStdout: "3"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			code, stdout, stderr, err := exec(t, "t", tt.tty, tt.stdin, tt.cmd...)
			require.NoError(t, err)
			require.Equal(t, tt.wantCode, code)
			if tt.tty {
				require.Contains(t, stdout, tt.wantStdout)
				return
			}
			require.Equal(t, tt.wantStdout, stdout)
			require.Equal(t, tt.wantStderr, stderr)
		})
	}

	t.Run("unknown task", func(t *testing.T) {
		_, _, _, err := exec(t, "nope", false, "", "echo", "hi")
		require.ErrorContains(t, err, `unknown task "nope"`)
	})
	t.Run("unknown program", func(t *testing.T) {
		// the task's root, not the agent, looks the program up: as a
		// container runtime does, it answers 126 and says why on stderr
		code, _, stderr, err := exec(t, "t", false, "", "no-such-program-here")
		require.NoError(t, err)
		require.Equal(t, 126, code)
		require.Contains(t, stderr, "no-such-program-here")
	})
}
