package logrotate

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// readAll reads r with a small buffer until io.EOF.
func readAll(t *testing.T, r *Reader) string {
	t.Helper()
	var b strings.Builder
	buf := make([]byte, 3)
	for {
		n, err := r.Read(buf)
		b.Write(buf[:n])
		if errors.Is(err, io.EOF) {
			return b.String()
		}
		require.NoError(t, err)
	}
}

// logOf writes files base.<index> with these contents.
func logOf(t *testing.T, contents map[int]string) string {
	t.Helper()
	base := filepath.Join(t.TempDir(), "web.stdout")
	for n, c := range contents {
		require.NoError(t, os.WriteFile(fileName(base, n), []byte(c), 0o644))
	}
	return base
}

func TestLocate(t *testing.T) {
	sizes := []int64{10, 5, 7}
	for _, tt := range []struct {
		fromEnd bool
		offset  int64
		i       int
		off     int64
	}{
		{false, 0, 0, 0},
		{false, 4, 0, 4},
		{false, 10, 0, 10},
		{false, 11, 1, 1},
		{false, 16, 2, 1},
		{false, 100, 2, 7},
		{true, 0, 2, 7},
		{true, 3, 2, 4},
		{true, 7, 2, 0},
		{true, 8, 1, 4},
		{true, 13, 0, 9},
		{true, 100, 0, 0},
	} {
		t.Run(fmt.Sprintf("end=%v,offset=%d", tt.fromEnd, tt.offset), func(t *testing.T) {
			i, off := locate(sizes, tt.fromEnd, tt.offset)
			require.Equal(t, tt.i, i)
			require.Equal(t, tt.off, off)
		})
	}
}

// TestReaderPositions: start and end offsets count across files, and the
// frames' File and Offset say where the bytes came from.
func TestReaderPositions(t *testing.T) {
	base := logOf(t, map[int]string{3: "abcde", 4: "fgh", 5: "ij"})
	for _, tt := range []struct {
		fromEnd bool
		offset  int64
		want    string
	}{
		{false, 0, "abcdefghij"},
		{false, 6, "ghij"},
		{true, 0, ""},
		{true, 4, "ghij"},
		{true, 50, "abcdefghij"},
	} {
		r, err := Open(base, tt.fromEnd, tt.offset)
		require.NoError(t, err)
		require.Equal(t, tt.want, readAll(t, r), "end=%v offset=%d", tt.fromEnd, tt.offset)
		require.Equal(t, fileName(base, 5), r.File())
		require.Equal(t, int64(2), r.Offset())
		r.Close()
	}
	_, err := Open(base, false, -1)
	require.ErrorIs(t, err, ErrOffset)
}

// TestReaderPlainFile: a log nobody rotates is its base file; no file at
// all is ErrNoLog.
func TestReaderPlainFile(t *testing.T) {
	base := filepath.Join(t.TempDir(), "stdout")
	_, err := Open(base, false, 0)
	require.ErrorIs(t, err, ErrNoLog)
	require.ErrorIs(t, err, os.ErrNotExist)

	require.NoError(t, os.WriteFile(base, []byte("hello\n"), 0o644))
	r, err := Open(base, true, 3)
	require.NoError(t, err)
	defer r.Close()
	require.Equal(t, "lo\n", readAll(t, r))
	require.Equal(t, base, r.File())
	require.Equal(t, int64(6), r.Offset())
}

// TestReaderRefusesLinks: a symlink planted as a log file is not followed.
func TestReaderRefusesLinks(t *testing.T) {
	base := filepath.Join(t.TempDir(), "stdout")
	secret := filepath.Join(t.TempDir(), "secret")
	require.NoError(t, os.WriteFile(secret, []byte("secret"), 0o600))
	require.NoError(t, os.Symlink(secret, fileName(base, 0)))
	_, err := Open(base, false, 0)
	require.Error(t, err)
}

// TestReaderSkipsDeletedFiles: files deleted under the reader are skipped
// to the oldest one left; the file it has open is still read to its end.
func TestReaderSkipsDeletedFiles(t *testing.T) {
	base := logOf(t, map[int]string{0: "aaa", 1: "bbb", 2: "ccc", 3: "ddd"})
	r, err := Open(base, false, 1)
	require.NoError(t, err)
	defer r.Close()
	for _, n := range []int{0, 1, 2} {
		require.NoError(t, os.Remove(fileName(base, n)))
	}
	require.Equal(t, "aaddd", readAll(t, r))

	// One found by the listing and gone before it is opened.
	base = logOf(t, map[int]string{5: "fff"})
	r = &Reader{base: base, idx: 2}
	require.Equal(t, "fff", readAll(t, r))
	r.Close()
}

// TestFollowAcrossRotation: a writer writes numbered lines through a
// Writer that rotates every few bytes while a follower reads, polling on
// a tick the writer gives after each write; every line comes exactly once
// and in order. With few files kept, lines the writer deleted before the
// follower got to them are missing, but none repeats or comes out of
// order, and the last one is there.
func TestFollowAcrossRotation(t *testing.T) {
	for _, tt := range []struct {
		name     string
		maxFiles int
		all      bool
	}{{"all files kept", 100000, true}, {"two files kept", 2, false}} {
		t.Run(tt.name, func(t *testing.T) {
			const lines = 2000
			base := filepath.Join(t.TempDir(), "web.stdout")
			w := newWriter(t, base, tt.maxFiles, 64)
			write(t, w, "line 0\n") // the log exists before the follower opens it
			r, err := Open(base, false, 0)
			require.NoError(t, err)
			defer r.Close()

			tick, done := make(chan struct{}, 1), make(chan struct{})
			errc := make(chan error, 1)
			go func() {
				defer close(done)
				for i := 1; i < lines; {
					var chunk strings.Builder
					for k := 0; k <= i%4 && i < lines; k++ { // 1 to 4 lines a write
						fmt.Fprintf(&chunk, "line %d\n", i)
						i++
					}
					if _, err := w.Write([]byte(chunk.String())); err != nil {
						errc <- err
						return
					}
					select {
					case tick <- struct{}{}:
					default:
					}
				}
			}()

			pr, pw := io.Pipe()
			got := make(chan []int, 1)
			go func() {
				var nums []int
				sc := bufio.NewScanner(pr)
				for sc.Scan() {
					n, err := strconv.Atoi(strings.TrimPrefix(sc.Text(), "line "))
					if err != nil {
						n = -1 // a line cut by a deleted file
					}
					nums = append(nums, n)
				}
				got <- nums
			}()
			follow(t, r, pw, tick, done)
			require.NoError(t, pw.Close())
			select {
			case err := <-errc:
				t.Fatal(err)
			default:
			}
			nums := <-got
			if tt.all {
				want := make([]int, lines)
				for i := range want {
					want[i] = i
				}
				require.Equal(t, want, nums)
				return
			}
			require.Equal(t, lines-1, nums[len(nums)-1])
			last := -1
			for _, n := range nums {
				if n >= 0 {
					require.Greater(t, n, last, "in order, never twice")
					last = n
				}
			}
			idx, err := indexes(base)
			require.NoError(t, err)
			require.Len(t, idx, 2)
		})
	}
}

// follow copies r to out, waiting on tick at the end of what is written,
// until done is closed and everything is read.
func follow(t *testing.T, r *Reader, out io.Writer, tick <-chan struct{}, done <-chan struct{}) {
	buf := make([]byte, 7)
	finished := false
	for {
		n, err := r.Read(buf)
		if n > 0 {
			_, werr := out.Write(buf[:n])
			require.NoError(t, werr)
			continue
		}
		if !errors.Is(err, io.EOF) {
			require.NoError(t, err)
		}
		if finished {
			return
		}
		select {
		case <-tick:
		case <-done:
			finished = true // every write is done: read to the end once more
		}
	}
}

// TestReaderDrainsBeforeMovingOn: bytes written to a file after the
// reader reached its end, before the next file appeared, are read before
// the next file's.
func TestReaderDrainsBeforeMovingOn(t *testing.T) {
	base := filepath.Join(t.TempDir(), "stdout")
	w := newWriter(t, base, 10, 8)
	write(t, w, "aaa\n")
	r, err := Open(base, false, 0)
	require.NoError(t, err)
	defer r.Close()
	require.Equal(t, "aaa\n", readAll(t, r))
	write(t, w, "bbb\nccc\n") // "bbb\n" to file 0, then file 1
	require.Equal(t, "bbb\nccc\n", readAll(t, r))
	require.Equal(t, fileName(base, 1), r.File())
}
