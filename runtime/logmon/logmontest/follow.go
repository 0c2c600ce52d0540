package logmontest

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/troupe-dev/troupe/runtime/logrotate"
)

// poll is how often a Follower looks for more.
const poll = 5 * time.Millisecond

// Follower reads one log from its start until it has read a given last
// line.
type Follower struct {
	base, last string
	stop, done chan struct{}
	once       sync.Once

	mu   sync.Mutex
	text bytes.Buffer
	err  error
}

// Follow starts reading the log at base (which need not exist yet) from
// its start, until the text read ends with last ("": until Stop).
func Follow(base, last string) *Follower {
	f := &Follower{base: base, last: last, stop: make(chan struct{}), done: make(chan struct{})}
	go f.run()
	return f
}

func (f *Follower) run() {
	defer close(f.done)
	tick := time.NewTicker(poll)
	defer tick.Stop()
	var r *logrotate.Reader
	defer func() {
		if r != nil {
			r.Close()
		}
	}()
	buf := make([]byte, 32<<10)
	for {
		if r == nil {
			var err error
			if r, err = logrotate.Open(f.base, false, 0); err != nil && !errors.Is(err, logrotate.ErrNoLog) {
				f.fail(err)
				return
			}
		}
		for r != nil {
			n, err := r.Read(buf)
			f.mu.Lock()
			f.text.Write(buf[:n])
			finished := f.last != "" && bytes.HasSuffix(f.text.Bytes(), []byte(f.last))
			f.mu.Unlock()
			if finished {
				return
			}
			if errors.Is(err, io.EOF) || (err == nil && n == 0) {
				break
			}
			if err != nil {
				f.fail(err)
				return
			}
		}
		select {
		case <-tick.C:
		case <-f.stop:
			return
		}
	}
}

func (f *Follower) fail(err error) {
	f.mu.Lock()
	f.err = err
	f.mu.Unlock()
}

// Wait waits up to timeout for the last line and returns all the text
// read; it fails t when the reader failed or the line did not come.
func (f *Follower) Wait(t testing.TB, timeout time.Duration) string {
	t.Helper()
	timer := time.NewTimer(timeout)
	defer timer.Stop()
	select {
	case <-f.done:
	case <-timer.C:
	}
	f.Stop()
	text, err := f.Text()
	require.NoError(t, err, "following %s", f.base)
	require.True(t, strings.HasSuffix(text, f.last), "following %s: %q never came; read %d bytes, ending %q",
		f.base, f.last, len(text), tail(text))
	return text
}

// Until waits up to timeout for the text read so far to end with s.
func (f *Follower) Until(t testing.TB, s string, timeout time.Duration) {
	t.Helper()
	require.Eventually(t, func() bool {
		text, err := f.Text()
		return err != nil || strings.HasSuffix(text, s)
	}, timeout, poll, "following %s: waiting for %q", f.base, s)
	_, err := f.Text()
	require.NoError(t, err, "following %s", f.base)
}

// Text is what was read so far, and the reader's error if it failed.
func (f *Follower) Text() (string, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.text.String(), f.err
}

// Stop ends the reading (Wait does it too) and waits for it to end.
func (f *Follower) Stop() {
	f.once.Do(func() { close(f.stop) })
	<-f.done
}

func tail(s string) string {
	if len(s) > 200 {
		return s[len(s)-200:]
	}
	return s
}

// Lines is "line <from>\n" .. "line <to>\n", what a task running
// `seq`-like output prints.
func Lines(from, to int) string {
	var b strings.Builder
	for i := from; i <= to; i++ {
		b.WriteString("line " + strconv.Itoa(i) + "\n")
	}
	return b.String()
}

// CheckFiles checks the rotated files of the log at base: at least
// minFiles and at most maxFiles of them, each at most maxBytes, with
// consecutive indexes; it returns their contents in order.
func CheckFiles(t testing.TB, base string, minFiles, maxFiles int, maxBytes int64) string {
	t.Helper()
	entries, err := os.ReadDir(filepath.Dir(base))
	require.NoError(t, err)
	var idx []int
	for _, e := range entries {
		if rest, ok := strings.CutPrefix(e.Name(), filepath.Base(base)+"."); ok {
			n, err := strconv.Atoi(rest)
			require.NoError(t, err, "unexpected file %s", e.Name())
			idx = append(idx, n)
		}
	}
	require.GreaterOrEqual(t, len(idx), minFiles, "files of %s: %v", base, idx)
	require.LessOrEqual(t, len(idx), maxFiles, "files of %s: %v", base, idx)
	if len(idx) == 0 {
		return ""
	}
	lo := slices.Min(idx)
	var all strings.Builder
	for i := range idx {
		name := fmt.Sprintf("%s.%d", base, lo+i)
		b, err := os.ReadFile(name)
		require.NoError(t, err, "the indexes of %s are consecutive", base)
		require.LessOrEqual(t, int64(len(b)), maxBytes, "%s is over the size", name)
		all.Write(b)
	}
	return all.String()
}
