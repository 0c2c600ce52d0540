package logmon

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/troupe-dev/troupe/runtime/logmon/logmontest"
	"github.com/troupe-dev/troupe/runtime/logrotate"
)

func testSpec(t *testing.T, maxFiles int, maxBytes int64) Spec {
	t.Setenv("GORACE", "atexit_sleep_ms=0") // the forwarders inherit it
	root := t.TempDir()
	require.NoError(t, os.Mkdir(filepath.Join(root, "logs"), 0o755))
	return Spec{Root: root, Stdout: filepath.Join(root, "logs", "task.stdout"),
		Stderr: filepath.Join(root, "logs", "task.stderr"), MaxFiles: maxFiles, MaxBytes: maxBytes}
}

func TestSpecCheck(t *testing.T) {
	s := testSpec(t, 2, 100)
	require.NoError(t, s.Check())
	for name, bad := range map[string]func(*Spec){
		"no files":     func(s *Spec) { s.MaxFiles = 0 },
		"no bytes":     func(s *Spec) { s.MaxBytes = 0 },
		"relative":     func(s *Spec) { s.Root = "logs" },
		"outside root": func(s *Spec) { s.Stderr = "/etc/shadow" },
	} {
		t.Run(name, func(t *testing.T) {
			b := s
			bad(&b)
			require.ErrorIs(t, b.Check(), ErrSpec)
			require.ErrorIs(t, Prepare(b), ErrSpec)
		})
	}
}

// TestForwarderRotates runs the test binary as the forwarder, as the qemu
// driver does: what comes on the pipes ends in rotated files, at most
// MaxFiles of at most MaxBytes, holding the newest lines; stderr goes to
// its own log; the forwarder exits 0 once the writers are gone.
func TestForwarderRotates(t *testing.T) {
	exe, err := os.Executable()
	require.NoError(t, err)
	s := testSpec(t, 3, 1000)
	follow := logmontest.Follow(s.Stdout, "line 2000\n")
	f, err := Start(exe, s)
	require.NoError(t, err)
	for i := 1; i <= 2000; i++ {
		_, err := fmt.Fprintf(f.Stdout, "line %d\n", i)
		require.NoError(t, err)
		if i%100 == 0 { // about one file: the follower keeps up
			follow.Until(t, fmt.Sprintf("line %d\n", i), 10*time.Second)
		}
	}
	_, err = io.WriteString(f.Stderr, "oops\n")
	require.NoError(t, err)
	require.NoError(t, f.Close())
	require.NoError(t, f.Cmd.Wait(), "the forwarder exits 0 at EOF")

	all := logmontest.Lines(1, 2000)
	kept := logmontest.CheckFiles(t, s.Stdout, 3, 3, 1000)
	require.True(t, strings.HasSuffix(all, kept), "the files hold the newest lines, whole")
	require.True(t, strings.HasPrefix(kept, "line "), "the oldest file kept starts with a whole line")
	require.Equal(t, "oops\n", logmontest.CheckFiles(t, s.Stderr, 1, 1, 1000))
	// the follower, reading from the start while the files rotated (and
	// the oldest were deleted), read every line once
	require.Equal(t, all, follow.Wait(t, 30*time.Second))
}

// TestForwarderContinues: a second forwarder on the same logs (a task
// restarted) continues the highest file.
func TestForwarderContinues(t *testing.T) {
	exe, err := os.Executable()
	require.NoError(t, err)
	s := testSpec(t, 5, 1<<20)
	for _, line := range []string{"first\n", "second\n"} {
		f, err := Start(exe, s)
		require.NoError(t, err)
		_, err = io.WriteString(f.Stdout, line)
		require.NoError(t, err)
		require.NoError(t, f.Close())
		require.NoError(t, f.Cmd.Wait())
	}
	require.Equal(t, "first\nsecond\n", logmontest.CheckFiles(t, s.Stdout, 1, 1, 1<<20))
}

// TestForwarderReportsOpenFailure: a log the forwarder cannot create
// fails Start with the forwarder's reason, and Prepare fails the same.
func TestForwarderReportsOpenFailure(t *testing.T) {
	exe, err := os.Executable()
	require.NoError(t, err)
	s := testSpec(t, 2, 100)
	s.Stdout = filepath.Join(s.Root, "missing", "task.stdout")
	_, err = Start(exe, s)
	require.ErrorIs(t, err, ErrStart)
	require.ErrorContains(t, err, "missing")
	require.Error(t, Prepare(s))

	link := testSpec(t, 2, 100)
	require.NoError(t, os.Symlink("/etc/passwd", link.Stdout+".0"))
	_, err = Start(exe, link)
	require.ErrorIs(t, err, ErrStart, "a symlink planted as the log is refused")
}

// TestForwardDrainsAfterStop: after a stop signal the copy goes on to
// EOF, but gives up after the drain time when a writer never goes.
func TestForwardDrainsAfterStop(t *testing.T) {
	s := testSpec(t, 2, 1000)
	ws, err := writers(s)
	require.NoError(t, err)
	r, w := io.Pipe()
	stop := make(chan os.Signal, 1)
	res := make(chan error, 1)
	go func() { res <- Forward(ws, [2]io.Reader{r, strings.NewReader("err\n")}, stop, 50*time.Millisecond) }()
	_, err = io.WriteString(w, "before\n")
	require.NoError(t, err)
	stop <- os.Interrupt
	select {
	case err := <-res:
		require.ErrorContains(t, err, "still open")
	case <-time.After(10 * time.Second):
		t.Fatal("Forward did not give up after the drain time")
	}
	w.Close()
	rd, err := logrotate.Open(s.Stdout, false, 0)
	require.NoError(t, err)
	defer rd.Close()
	b, err := io.ReadAll(rd)
	require.NoError(t, err)
	require.Equal(t, "before\n", string(b))
	require.Equal(t, "err\n", logmontest.CheckFiles(t, s.Stderr, 1, 1, 1000))
}
