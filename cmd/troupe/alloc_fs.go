package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"strconv"
	"time"

	"github.com/troupe-dev/troupe/api"
)

// fsOptions are the flags of `troupe alloc fs`.
type fsOptions struct {
	allocID, path      string
	stat, follow, tail bool
	lines              int
	bytes              int64
}

// allocFSCommand is `troupe alloc fs [-stat] [-f] [-tail] [-n N] [-c N] ID [PATH]`:
// a directory is listed, a file printed, as Nomad's `alloc fs` does.
func allocFSCommand(args []string, stdout, stderr io.Writer) int {
	m := newMeta("alloc fs", stdout, stderr, false)
	stat := m.fs.Bool("stat", false, "describe the file or directory instead of showing it")
	follow := m.fs.Bool("f", false, "follow the file until interrupted")
	tail := m.fs.Bool("tail", false, "show the end of the file (10 lines unless -n or -c)")
	lines := m.fs.Int("n", -1, "with -tail, how many lines (implies -tail)")
	nbytes := m.fs.Int64("c", -1, "with -tail, how many bytes (implies -tail)")
	rest, code, ok := m.parse(args)
	if !ok {
		return code
	}
	if len(rest) < 1 || len(rest) > 2 {
		return m.usageError("ID [PATH]")
	}
	c, alloc, code, ok := m.allocClient(rest[0])
	if !ok {
		return code
	}
	o := fsOptions{allocID: alloc.ID, path: "/", stat: *stat, follow: *follow,
		tail: *tail || *lines >= 0 || *nbytes >= 0, lines: *lines, bytes: *nbytes}
	if len(rest) == 2 {
		o.path = rest[1]
	}
	if o.lines < 0 {
		o.lines = defaultTailLines
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	if err := showAllocPath(ctx, c.AllocFS(), o, m.stdout); err != nil && ctx.Err() == nil {
		return m.fail("reading "+o.path, err)
	}
	return exitOK
}

// showAllocPath describes, lists or prints o.path as o asks.
func showAllocPath(ctx context.Context, fs *api.AllocFS, o fsOptions, w io.Writer) error {
	st, err := fs.Stat(ctx, o.allocID, o.path)
	if err != nil {
		return err
	}
	if o.stat {
		writeTable(w, []string{"Mode", "Size", "Modified Time", "Content Type", "Name"},
			[][]string{{st.FileMode, strconv.FormatInt(st.Size, 10), fsTime(st.ModTime), orNone(st.ContentType), st.Name}})
		return nil
	}
	if st.IsDir {
		if o.follow || o.tail {
			return fmt.Errorf("%w: %s (-f and -tail read files)", errIsDir, o.path)
		}
		ls, err := fs.List(ctx, o.allocID, o.path)
		if err != nil {
			return err
		}
		rows := make([][]string, 0, len(ls))
		for _, fi := range ls {
			name := fi.Name
			if fi.IsDir {
				name += "/"
			}
			rows = append(rows, []string{fi.FileMode, strconv.FormatInt(fi.Size, 10), fsTime(fi.ModTime), name})
		}
		writeTable(w, []string{"Mode", "Size", "Modified Time", "Name"}, rows)
		return nil
	}
	return printAllocFile(ctx, fs, o, st.Size, w)
}

// printAllocFile prints the file (its end with -tail), then follows it
// from where that ended with -f.
func printAllocFile(ctx context.Context, fs *api.AllocFS, o fsOptions, size int64, w io.Writer) error {
	var start int64
	if o.tail {
		start = max(size-int64(o.lines*tailBytesPerLine), 0)
		if o.bytes >= 0 {
			start = max(size-o.bytes, 0)
		}
	}
	rc, err := fs.ReadAt(ctx, o.allocID, o.path, start, 0)
	if err != nil {
		return err
	}
	var buf bytes.Buffer
	_, err = io.Copy(&buf, rc)
	rc.Close()
	if err != nil {
		return err
	}
	out := buf.Bytes()
	if o.tail && o.bytes < 0 {
		out = lastLines(out, o.lines)
	}
	if _, err := w.Write(out); err != nil || !o.follow {
		return err
	}
	s, err := fs.Stream(ctx, o.allocID, o.path, api.OriginStart, start+int64(buf.Len()), true)
	if err != nil {
		return err
	}
	defer s.Close()
	if _, err := io.Copy(w, s); err != nil && !errors.Is(err, context.Canceled) {
		return err
	}
	return nil
}

func fsTime(t time.Time) string { return t.UTC().Format(time.RFC3339) }
