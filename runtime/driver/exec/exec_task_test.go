//go:build linux

package exec

import (
	"bytes"
	"context"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/troupe-dev/troupe/runtime/driver"
)

func TestExecTaskPiped(t *testing.T) {
	d := newDriver(t)
	cfg, _ := start(t, d, "sleep 60")
	real, err := filepath.EvalSymlinks(cfg.TaskDir)
	require.NoError(t, err)
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
		{name: "task context", command: []string{"sh", "-c", `pwd -P; printf '%s\n' "$PATH"`},
			wantStdout: real + "\n" + defaultPath + "\n"},
		{name: "stdin", command: []string{"cat"}, stdin: "fed\n", wantStdout: "fed\n"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var stdout, stderr bytes.Buffer
			code, err := d.ExecTask(context.Background(), cfg.ID, &driver.ExecOptions{
				Command: tt.command, Stdin: strings.NewReader(tt.stdin), Stdout: &stdout, Stderr: &stderr})
			require.NoError(t, err)
			require.Equal(t, tt.wantCode, code)
			require.Equal(t, tt.wantStdout, stdout.String())
			require.Equal(t, tt.wantStderr, stderr.String())
		})
	}
}

func TestExecTaskPty(t *testing.T) {
	d := newDriver(t)
	cfg, _ := start(t, d, "sleep 60")
	var out bytes.Buffer
	sizes := make(chan driver.TerminalSize, 1)
	sizes <- driver.TerminalSize{Height: 30, Width: 100}
	code, err := d.ExecTask(context.Background(), cfg.ID, &driver.ExecOptions{
		Command: []string{"sh"}, Tty: true, Resize: sizes,
		Stdin: strings.NewReader("test -t 0 && echo tty-$((1+2))\nexit 4\n"), Stdout: &out})
	require.NoError(t, err)
	require.Equal(t, 4, code)
	require.Contains(t, out.String(), "tty-3")
}

func TestExecTaskRefused(t *testing.T) {
	d := newDriver(t)
	cfg, _ := start(t, d, "sleep 60")
	_, err := d.ExecTask(context.Background(), "alloc/nope", &driver.ExecOptions{Command: []string{"true"}})
	require.ErrorIs(t, err, driver.ErrTaskNotFound)
	_, err = d.ExecTask(context.Background(), cfg.ID, &driver.ExecOptions{})
	require.ErrorIs(t, err, driver.ErrInvalidConfig)
	_, err = d.ExecTask(context.Background(), cfg.ID, &driver.ExecOptions{Command: []string{"no-such-program-here"}})
	require.Error(t, err)
}
