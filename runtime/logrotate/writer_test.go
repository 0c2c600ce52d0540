package logrotate

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/stretchr/testify/require"
)

// files reads every file of the log at base: index -> content.
func files(t *testing.T, base string) map[int]string {
	t.Helper()
	idx, err := indexes(base)
	require.NoError(t, err)
	out := map[int]string{}
	for _, n := range idx {
		b, err := os.ReadFile(fileName(base, n))
		require.NoError(t, err)
		out[n] = string(b)
	}
	return out
}

func newWriter(t *testing.T, base string, maxFiles int, maxBytes int64) *Writer {
	t.Helper()
	w, err := NewWriter(base, Options{MaxFiles: maxFiles, MaxBytes: maxBytes})
	require.NoError(t, err)
	t.Cleanup(func() { w.Close() })
	return w
}

func write(t *testing.T, w io.Writer, s string) {
	t.Helper()
	n, err := w.Write([]byte(s))
	require.NoError(t, err)
	require.Equal(t, len(s), n)
}

// TestWriterRotatesAndKeepsMaxFiles: files fill to MaxBytes, the index
// grows from 0, and only the newest MaxFiles are kept.
func TestWriterRotatesAndKeepsMaxFiles(t *testing.T) {
	base := filepath.Join(t.TempDir(), "web.stdout")
	w := newWriter(t, base, 3, 10)
	for i := range 10 {
		write(t, w, fmt.Sprintf("l%03d\n", i))
	}
	require.Equal(t, map[int]string{
		2: "l004\nl005\n",
		3: "l006\nl007\n",
		4: "l008\nl009\n",
	}, files(t, base), "five files were written, the two oldest deleted")
}

// TestWriterCuts: what does not fit goes to the next file, cut after the
// last newline that fits; a line that fits nowhere fills files whole.
func TestWriterCuts(t *testing.T) {
	for _, tt := range []struct {
		name   string
		max    int64
		writes []string
		want   map[int]string
	}{
		{"after the last newline that fits", 10, []string{"abc\ndefghij\n"},
			map[int]string{0: "abc\n", 1: "defghij\n"}},
		{"a write larger than a file", 4, []string{"0123456789"},
			map[int]string{0: "0123", 1: "4567", 2: "89"}},
		{"no newline fits: a fresh file", 5, []string{"ab", "cdefgh"},
			map[int]string{0: "ab", 1: "cdefg", 2: "h"}},
		{"exactly full", 4, []string{"abc\n", "d"},
			map[int]string{0: "abc\n", 1: "d"}},
		{"many lines in one write", 8, []string{"a\nb\nc\nd\ne\nf\ng\n"},
			map[int]string{0: "a\nb\nc\nd\n", 1: "e\nf\ng\n"}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			base := filepath.Join(t.TempDir(), "stdout")
			w := newWriter(t, base, 10, tt.max)
			for _, s := range tt.writes {
				write(t, w, s)
			}
			got := files(t, base)
			require.Equal(t, tt.want, got)
			for _, c := range got {
				require.LessOrEqual(t, int64(len(c)), tt.max)
			}
		})
	}
}

// TestWriterContinuesAfterRestart: a new Writer on the same base appends
// to the highest file until it is full, then opens the next index.
func TestWriterContinuesAfterRestart(t *testing.T) {
	base := filepath.Join(t.TempDir(), "stdout")
	w := newWriter(t, base, 5, 8)
	write(t, w, "aaa\nbbb\nccc\n")
	require.NoError(t, w.Close())
	require.Equal(t, map[int]string{0: "aaa\nbbb\n", 1: "ccc\n"}, files(t, base))

	w = newWriter(t, base, 5, 8)
	write(t, w, "ddd\neee\n")
	require.Equal(t, map[int]string{0: "aaa\nbbb\n", 1: "ccc\nddd\n", 2: "eee\n"}, files(t, base))

	// A restart on a full file rotates at the first write.
	require.NoError(t, w.Close())
	write(t, w, "") // nothing to write, nothing opened
	require.NoError(t, os.WriteFile(fileName(base, 2), []byte("full\nxx\n"), 0o644))
	w = newWriter(t, base, 5, 8)
	write(t, w, "fff\n")
	require.Equal(t, "fff\n", files(t, base)[3])
}

// TestWriterPurgesOnOpen: a Writer opened with fewer MaxFiles than there
// are files deletes the oldest at once, and never a file above its own.
func TestWriterPurgesOnOpen(t *testing.T) {
	base := filepath.Join(t.TempDir(), "stdout")
	for _, n := range []int{3, 4, 5, 6} {
		require.NoError(t, os.WriteFile(fileName(base, n), []byte("x"), 0o644))
	}
	require.NoError(t, os.WriteFile(base+".notanindex", []byte("x"), 0o644))
	newWriter(t, base, 2, 100)
	got := files(t, base)
	require.Equal(t, map[int]string{5: "x", 6: "x"}, got)
	_, err := os.Stat(base + ".notanindex")
	require.NoError(t, err, "other names are left alone")
}

// TestWriterRefuses: bad options, and a fifo planted as the log file
// (refused, without waiting for a reader).
func TestWriterRefuses(t *testing.T) {
	base := filepath.Join(t.TempDir(), "stdout")
	_, err := NewWriter(base, Options{MaxFiles: 0, MaxBytes: 1})
	require.ErrorIs(t, err, ErrOptions)
	_, err = NewWriter(base, Options{MaxFiles: 1, MaxBytes: 0})
	require.ErrorIs(t, err, ErrOptions)

	require.NoError(t, syscall.Mkfifo(fileName(base, 0), 0o644))
	_, err = NewWriter(base, Options{MaxFiles: 1, MaxBytes: 1})
	require.Error(t, err, "a fifo with no reader: ENXIO rather than a wait")

	// With a reader there, it opens, and is refused as not a file.
	r, err := os.OpenFile(fileName(base, 0), os.O_RDONLY|syscall.O_NONBLOCK, 0)
	require.NoError(t, err)
	defer r.Close()
	_, err = NewWriter(base, Options{MaxFiles: 1, MaxBytes: 1})
	require.ErrorIs(t, err, ErrNotRegular)
}

// TestWriterReportsPurgeErrorAfterWriting: a file that cannot be deleted
// does not lose the bytes of the write that rotated.
func TestWriterReportsPurgeErrorAfterWriting(t *testing.T) {
	base := filepath.Join(t.TempDir(), "stdout")
	boom := errors.New("boom")
	w, err := NewWriter(base, Options{MaxFiles: 1, MaxBytes: 4, Remove: func(string) error { return boom }})
	require.NoError(t, err)
	defer w.Close()
	n, err := w.Write([]byte("abc\ndef\n"))
	require.Equal(t, 8, n)
	require.ErrorIs(t, err, boom)
	require.Equal(t, map[int]string{0: "abc\n", 1: "def\n"}, files(t, base))
}

// TestPump copies a pipe into the log until its write end closes; a
// failing writer does not stop the copy.
func TestPump(t *testing.T) {
	base := filepath.Join(t.TempDir(), "stdout")
	w := newWriter(t, base, 100, 1000)
	pr, pw, err := os.Pipe()
	require.NoError(t, err)
	done := make(chan error, 1)
	go func() { done <- Pump(pr, w) }()
	var want strings.Builder
	for i := range 500 {
		line := fmt.Sprintf("line %d\n", i)
		want.WriteString(line)
		_, err := pw.WriteString(line)
		require.NoError(t, err)
	}
	require.NoError(t, pw.Close())
	require.NoError(t, <-done)
	var got strings.Builder
	idx, err := indexes(base)
	require.NoError(t, err)
	require.Greater(t, len(idx), 3, "it rotated")
	for _, n := range idx {
		got.WriteString(files(t, base)[n])
	}
	require.Equal(t, want.String(), got.String())

	pr, pw, err = os.Pipe()
	require.NoError(t, err)
	go func() { done <- Pump(pr, failingWriter{}) }()
	_, err = pw.Write(make([]byte, 1<<20)) // more than a pipe holds: Pump must drain it
	require.NoError(t, err)
	require.NoError(t, pw.Close())
	require.ErrorContains(t, <-done, "disk full")
}

type failingWriter struct{}

func (failingWriter) Write([]byte) (int, error) { return 0, errors.New("disk full") }

// TestWriterNeverHoldsMoreThanMaxFiles: the oldest file goes before the
// next one is created, so the files on disk never number more than
// MaxFiles, not even for a moment.
func TestWriterNeverHoldsMoreThanMaxFiles(t *testing.T) {
	base := filepath.Join(t.TempDir(), "stdout")
	most := 0
	open := func(name string, flag int, perm os.FileMode) (*os.File, error) {
		idx, err := indexes(base)
		require.NoError(t, err)
		if _, err := os.Stat(name); err != nil {
			idx = append(idx, -1) // about to be created
		}
		most = max(most, len(idx))
		return os.OpenFile(name, flag, perm)
	}
	w, err := NewWriter(base, Options{MaxFiles: 3, MaxBytes: 4, OpenFile: open})
	require.NoError(t, err)
	defer w.Close()
	for range 20 {
		write(t, w, "abc\n")
	}
	require.Equal(t, 3, most)
	require.Len(t, files(t, base), 3)
}
