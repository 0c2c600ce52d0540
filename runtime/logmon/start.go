package logmon

import (
	"errors"
	"fmt"
	"io"
	"os"
	osexec "os/exec"
	"strings"
	"syscall"
)

// Forwarder is a forwarder that Start started: the caller hands Stdout and
// Stderr, the pipes' write ends, to the task's supervisor and then closes
// them (Close), and reaps Cmd when it wants the forwarder's exit.
type Forwarder struct {
	Cmd            *osexec.Cmd
	Stdout, Stderr *os.File
}

// Close closes the caller's write ends (the task's copies stay open).
func (f *Forwarder) Close() error {
	return errors.Join(f.Stdout.Close(), f.Stderr.Close())
}

// Start runs bin as the forwarder of spec, in a session of its own (so
// that signals to the agent's process group do not reach it), and
// returns once it is ready, or its error when it fails to be.
func Start(bin string, spec Spec) (_ *Forwarder, err error) {
	if err := spec.Check(); err != nil {
		return nil, err
	}
	args, err := spec.Args()
	if err != nil {
		return nil, err
	}
	var closers []io.Closer
	defer func() {
		for _, c := range closers {
			c.Close()
		}
	}()
	pipe := func() (*os.File, *os.File, error) {
		r, w, err := os.Pipe()
		if err == nil {
			closers = append(closers, r, w)
		}
		return r, w, err
	}
	outR, outW, err := pipe()
	if err != nil {
		return nil, err
	}
	errR, errW, err := pipe()
	if err != nil {
		return nil, err
	}
	readyR, readyW, err := pipe()
	if err != nil {
		return nil, err
	}
	cmd := osexec.Command(bin, args...)
	cmd.ExtraFiles = []*os.File{outR, errR, readyW}
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("%w: %w", ErrStart, err)
	}
	readyW.Close()
	msg, _ := io.ReadAll(readyR)
	if len(msg) > 0 {
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
		return nil, fmt.Errorf("%w: %s", ErrStart, strings.TrimSpace(string(msg)))
	}
	outR.Close()
	errR.Close()
	readyR.Close()
	closers = nil
	return &Forwarder{Cmd: cmd, Stdout: outW, Stderr: errW}, nil
}
