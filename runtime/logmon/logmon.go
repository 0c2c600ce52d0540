package logmon

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"path/filepath"
	"syscall"
	"time"

	"github.com/troupe-dev/troupe/runtime/logrotate"
	"github.com/troupe-dev/troupe/runtime/safepath"
)

// Command is the hidden subcommand (the first argument) that runs Main.
const Command = "logmon"

// DrainTimeout bounds how long the forwarder goes on copying after a
// termination signal: a process that left the task may hold a pipe open
// for ever.
const DrainTimeout = 5 * time.Second

// The forwarder's inherited descriptors (containerd's binary logger
// protocol).
const (
	stdoutFd = 3
	stderrFd = 4
	readyFd  = 5
)

// Spec is what one forwarder writes: the bases of the two rotated logs
// (base.0, base.1, ...), each "" to discard that stream, and their size.
type Spec struct {
	Stdout string `json:"stdout,omitempty"`
	Stderr string `json:"stderr,omitempty"`
	// Root is a directory that holds both logs: they are opened beneath
	// it, refusing symlinks (the forwarder runs as root, in a directory
	// the task may write).
	Root     string `json:"root"`
	MaxFiles int    `json:"max_files"`
	MaxBytes int64  `json:"max_bytes"`
}

// Check says what is wrong with s, if anything.
func (s Spec) Check() error {
	if s.MaxFiles < 1 || s.MaxBytes < 1 {
		return fmt.Errorf("%w: %d files of %d bytes", ErrSpec, s.MaxFiles, s.MaxBytes)
	}
	if !filepath.IsAbs(s.Root) {
		return fmt.Errorf("%w: root %q is not absolute", ErrSpec, s.Root)
	}
	for _, p := range []string{s.Stdout, s.Stderr} {
		if p != "" && !safepath.Within(s.Root, p) {
			return fmt.Errorf("%w: log %q is outside %s", ErrSpec, p, s.Root)
		}
	}
	return nil
}

// Args is the forwarder's command line after the binary.
func (s Spec) Args() ([]string, error) {
	b, err := json.Marshal(s)
	if err != nil {
		return nil, err
	}
	return []string{Command, string(b)}, nil
}

// Prepare opens and closes s's writers: it creates each log's file (or
// continues its highest one) and purges what is beyond MaxFiles, so that
// a path the forwarder could not write fails here.
func Prepare(s Spec) error {
	ws, err := writers(s)
	for _, w := range ws {
		if w != nil {
			err = errors.Join(err, w.Close())
		}
	}
	return err
}

// writers opens s's two writers (nil for a discarded stream).
func writers(s Spec) ([2]*logrotate.Writer, error) {
	var ws [2]*logrotate.Writer
	if err := s.Check(); err != nil {
		return ws, err
	}
	opts := logrotate.Options{MaxFiles: s.MaxFiles, MaxBytes: s.MaxBytes,
		OpenFile: func(name string, flag int, perm os.FileMode) (*os.File, error) {
			return safepath.OpenFile(s.Root, name, flag, perm)
		},
		Remove: func(name string) error { return safepath.RemoveAll(s.Root, name) },
	}
	for i, base := range []string{s.Stdout, s.Stderr} {
		if base == "" {
			continue
		}
		w, err := logrotate.NewWriter(base, opts)
		if err != nil {
			if ws[0] != nil {
				ws[0].Close()
			}
			return [2]*logrotate.Writer{}, fmt.Errorf("logmon: %s: %w", base, err)
		}
		ws[i] = w
	}
	return ws, nil
}

// Main runs the forwarder: args is [spec JSON]; the streams come on fds
// 3 and 4, and fd 5 is closed once it is ready. It returns the exit code.
func Main(args []string) int {
	ready := os.NewFile(readyFd, "ready")
	if len(args) != 1 {
		return fail(ready, fmt.Errorf("%w: want one argument, the spec, got %d", ErrSpec, len(args)))
	}
	var s Spec
	if err := json.Unmarshal([]byte(args[0]), &s); err != nil {
		return fail(ready, fmt.Errorf("%w: %w", ErrSpec, err))
	}
	ws, err := writers(s)
	if err != nil {
		return fail(ready, err)
	}
	sigs := make(chan os.Signal, 1)
	signal.Notify(sigs, syscall.SIGTERM, syscall.SIGINT, syscall.SIGHUP)
	if ready != nil {
		ready.Close()
	}
	err = Forward(ws, [2]io.Reader{os.NewFile(stdoutFd, "stdout"), os.NewFile(stderrFd, "stderr")}, sigs, DrainTimeout)
	if err != nil {
		fmt.Fprintln(os.Stderr, "logmon:", err)
		return 1
	}
	return 0
}

// fail reports err on the ready pipe (and stderr) and returns 1.
func fail(ready *os.File, err error) int {
	fmt.Fprintln(os.Stderr, err)
	if ready != nil {
		fmt.Fprintln(ready, err)
		ready.Close()
	}
	return 1
}

// Forward copies each of rs into its writer (discarding it where the
// writer is nil) until all reach EOF, then closes the writers. Once a
// value comes on stop it waits at most drain more; the copies still
// running then are abandoned (their readers are the caller's to close).
func Forward(ws [2]*logrotate.Writer, rs [2]io.Reader, stop <-chan os.Signal, drain time.Duration) error {
	done := make(chan error, len(rs))
	running := 0
	for i, r := range rs {
		if r == nil {
			continue
		}
		running++
		go func(w *logrotate.Writer) {
			if w == nil {
				_, err := io.Copy(io.Discard, r)
				done <- err
				return
			}
			err := logrotate.Pump(r, w)
			done <- errors.Join(err, w.Close())
		}(ws[i])
	}
	var errs []error
	var timeout <-chan time.Time
	for running > 0 {
		select {
		case err := <-done:
			running--
			errs = append(errs, err)
		case <-stop:
			if timeout == nil {
				t := time.NewTimer(drain)
				defer t.Stop()
				timeout = t.C
			}
		case <-timeout:
			return errors.Join(append(errs, fmt.Errorf("logmon: streams still open %v after a stop signal", drain))...)
		}
	}
	return errors.Join(errs...)
}
