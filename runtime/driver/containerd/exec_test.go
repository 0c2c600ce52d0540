//go:build linux

package containerd

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/containerd/containerd/v2/client"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/troupe-dev/troupe/internal/syncbuf"
	"github.com/troupe-dev/troupe/runtime/driver"
)

// idle is a task that runs until it is stopped.
const idle = `echo ready; exec sleep 600`

// startIdle starts an idle task on d, with FOO in its env and /local as
// its working dir, and waits until it runs.
func (e *testEnv) startIdle(t *testing.T, d *Driver) (*driver.TaskConfig, *driver.TaskHandle) {
	t.Helper()
	cfg := e.taskConfig(t, idle)
	cfg.Env["FOO"] = "from-task"
	cfg.Config["work_dir"] = "/local"
	h := e.start(t, d, cfg)
	waitOutput(t, cfg.StdoutPath, "ready\n")
	return cfg, h
}

// execIn runs cmd piped in taskID with stdin and returns its code,
// stdout and stderr.
func execIn(t *testing.T, d *Driver, taskID, stdin string, cmd ...string) (int, string, string, error) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	var stdout, stderr bytes.Buffer
	code, err := d.ExecTask(ctx, taskID, &driver.ExecOptions{Command: cmd,
		Stdin: strings.NewReader(stdin), Stdout: &stdout, Stderr: &stderr})
	return code, stdout.String(), stderr.String(), err
}

func TestExecTaskPiped(t *testing.T) {
	e := setupEnv(t)
	d := e.newDriver(t)
	cfg, _ := e.startIdle(t, d)
	tests := []struct {
		name       string
		command    []string
		stdin      string
		wantCode   int
		wantStdout string
		wantStderr string
	}{
		{name: "echo", command: []string{"echo", "hi"}, wantStdout: "hi\n"},
		{name: "exit code", command: []string{"sh", "-c", "echo oops >&2; exit 3"}, wantCode: 3, wantStderr: "oops\n"},
		{name: "task context", command: []string{"sh", "-c", `echo "$FOO"; pwd; id -u`},
			wantStdout: "from-task\n/local\n0\n"},
		{name: "stdin", command: []string{"cat"}, stdin: "fed\nand more\n", wantStdout: "fed\nand more\n"},
		{name: "no stdin", command: []string{"cat"}},
		{name: "killed by a signal", command: []string{"sh", "-c", "kill -TERM $$"}, wantCode: 128 + int(syscall.SIGTERM)},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			code, stdout, stderr, err := execIn(t, d, cfg.ID, tt.stdin, tt.command...)
			require.NoError(t, err)
			require.Equal(t, tt.wantCode, code)
			require.Equal(t, tt.wantStdout, stdout)
			require.Equal(t, tt.wantStderr, stderr)
		})
	}

	t.Run("nil stdin", func(t *testing.T) {
		var stdout bytes.Buffer
		code, err := d.ExecTask(context.Background(), cfg.ID, &driver.ExecOptions{
			Command: []string{"sh", "-c", "cat; echo done"}, Stdout: &stdout})
		require.NoError(t, err)
		require.Zero(t, code)
		require.Equal(t, "done\n", stdout.String(), "no stdin is EOF at once")
	})
	t.Run("unknown program", func(t *testing.T) {
		code, stdout, stderr, err := execIn(t, d, cfg.ID, "", "no-such-program-here")
		require.NoError(t, err)
		require.Equal(t, 126, code)
		require.Empty(t, stdout)
		require.Contains(t, stderr, "no-such-program-here")
	})
	t.Run("concurrent execs", func(t *testing.T) {
		const n = 4
		outs := make([]string, n)
		var wg sync.WaitGroup
		for i := range n {
			wg.Add(1)
			go func() {
				defer wg.Done()
				code, stdout, _, err := execIn(t, d, cfg.ID, "", "sh", "-c", fmt.Sprintf("sleep 0.2; echo %d", i))
				assert.NoError(t, err)
				assert.Zero(t, code)
				outs[i] = stdout
			}()
		}
		wg.Wait()
		for i, out := range outs {
			require.Equal(t, fmt.Sprintf("%d\n", i), out)
		}
	})
	// The task itself was left alone.
	require.Equal(t, client.Running, e.taskStatus(t, cfg.ID).Status)
}

func TestExecTaskTTY(t *testing.T) {
	e := setupEnv(t)
	d := e.newDriver(t)
	cfg, _ := e.startIdle(t, d)
	stdinR, stdinW := io.Pipe()
	defer stdinW.Close()
	var out syncbuf.Buffer
	sizes := make(chan driver.TerminalSize, 1)
	sizes <- driver.TerminalSize{Height: 30, Width: 100}
	type execResult struct {
		code int
		err  error
	}
	done := make(chan execResult, 1)
	go func() {
		code, err := d.ExecTask(context.Background(), cfg.ID, &driver.ExecOptions{
			Command: []string{"sh"}, Tty: true, Stdin: stdinR, Stdout: &out, Resize: sizes})
		done <- execResult{code, err}
	}()
	// typed writes a line to the shell until its output has want.
	typed := func(line, want string) {
		t.Helper()
		require.EventuallyWithT(t, func(c *assert.CollectT) {
			_, err := io.WriteString(stdinW, line+"\n")
			require.NoError(c, err)
			require.Eventually(c, func() bool { return strings.Contains(out.String(), want) },
				time.Second, 10*time.Millisecond)
		}, 20*time.Second, 10*time.Millisecond, "no %q in the pty's output:\n%s", want, out.String())
	}
	typed("tty", "/dev/pts/")
	typed("stty size", "30 100")
	sizes <- driver.TerminalSize{Height: 42, Width: 132}
	typed("stty size", "42 132")
	typed("echo $((6*7))-done", "42-done")
	_, err := io.WriteString(stdinW, "exit 7\n")
	require.NoError(t, err)
	select {
	case r := <-done:
		require.NoError(t, r.err)
		require.Equal(t, 7, r.code)
	case <-time.After(20 * time.Second):
		t.Fatalf("the shell did not exit; output:\n%s", out.String())
	}
}

func TestExecTaskAfterRecover(t *testing.T) {
	e := setupEnv(t)
	d1 := e.newDriver(t)
	cfg, h := e.startIdle(t, d1)
	d1.Shutdown() // the agent stops; the task runs on
	data, err := json.Marshal(h)
	require.NoError(t, err)
	var restored driver.TaskHandle
	require.NoError(t, json.Unmarshal(data, &restored))

	d2 := e.newDriver(t)
	_, _, _, err = execIn(t, d2, cfg.ID, "", "true")
	require.ErrorIs(t, err, driver.ErrTaskNotFound, "a task the driver does not know")
	require.NoError(t, d2.RecoverTask(context.Background(), &restored))
	code, stdout, _, err := execIn(t, d2, cfg.ID, "in\n", "sh", "-c", `read x; echo "$x $FOO"; exit 5`)
	require.NoError(t, err)
	require.Equal(t, 5, code)
	require.Equal(t, "in from-task\n", stdout)
}

func TestExecTaskContextEndKills(t *testing.T) {
	e := setupEnv(t)
	d := e.newDriver(t)
	cfg, _ := e.startIdle(t, d)
	cl, cctx := e.client(t)
	ctr, err := cl.LoadContainer(cctx, ContainerID(cfg.ID))
	require.NoError(t, err)
	tsk, err := ctr.Task(cctx, nil)
	require.NoError(t, err)
	before, err := tsk.Pids(cctx)
	require.NoError(t, err)

	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	started := &signalWriter{ch: make(chan struct{})}
	done := make(chan struct{})
	var code int
	go func() {
		defer close(done)
		code, err = d.ExecTask(ctx, cfg.ID, &driver.ExecOptions{
			Command: []string{"sh", "-c", "echo started; exec sleep 600"}, Stdout: started})
	}()
	select {
	case <-started.ch:
	case <-time.After(20 * time.Second):
		t.Fatal("the exec did not start")
	}
	during, perr := tsk.Pids(cctx)
	require.NoError(t, perr)
	require.Len(t, during, len(before)+1, "the exec runs in the container")
	cancel()
	select {
	case <-done:
	case <-time.After(20 * time.Second):
		t.Fatal("ExecTask did not return after its context ended")
	}
	require.NoError(t, err)
	require.Equal(t, 128+int(syscall.SIGKILL), code)
	after, err := tsk.Pids(cctx)
	require.NoError(t, err)
	require.Len(t, after, len(before), "the exec's process is gone")
	require.Equal(t, client.Running, e.taskStatus(t, cfg.ID).Status, "the task runs on")
}

// signalWriter closes ch at its first write.
type signalWriter struct {
	once sync.Once
	ch   chan struct{}
}

func (w *signalWriter) Write(p []byte) (int, error) {
	w.once.Do(func() { close(w.ch) })
	return len(p), nil
}

func TestExecTaskRefused(t *testing.T) {
	e := setupEnv(t)
	d := e.newDriver(t)
	cfg, _ := e.startIdle(t, d)
	_, _, _, err := execIn(t, d, "alloc/nope", "", "true")
	require.ErrorIs(t, err, driver.ErrTaskNotFound)
	_, err = d.ExecTask(context.Background(), cfg.ID, &driver.ExecOptions{})
	require.ErrorIs(t, err, driver.ErrInvalidConfig)

	// Stopped through the driver.
	require.NoError(t, d.StopTask(context.Background(), cfg.ID, time.Second, "SIGKILL"))
	result(t, d, cfg.ID)
	_, _, _, err = execIn(t, d, cfg.ID, "", "echo", "hi")
	require.ErrorIs(t, err, driver.ErrTaskNotFound)

	// Killed behind the driver's back: exec may come before the driver
	// has seen the exit.
	require.NoError(t, d.DestroyTask(context.Background(), cfg.ID, false))
	cfg2, _ := e.startIdle(t, d)
	cl, cctx := e.client(t)
	ctr, err := cl.LoadContainer(cctx, ContainerID(cfg2.ID))
	require.NoError(t, err)
	tsk, err := ctr.Task(cctx, nil)
	require.NoError(t, err)
	require.NoError(t, tsk.Kill(cctx, syscall.SIGKILL))
	require.Eventually(t, func() bool { return e.taskStatus(t, cfg2.ID).Status == client.Stopped },
		10*time.Second, 5*time.Millisecond)
	_, _, _, err = execIn(t, d, cfg2.ID, "", "echo", "hi")
	require.ErrorIs(t, err, driver.ErrTaskNotFound)
}
