package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"strings"

	"github.com/troupe-dev/troupe/api"
	"github.com/troupe-dev/troupe/messages"
)

const (
	// defaultTailLines is what -tail shows without -n.
	defaultTailLines = 10
	// tailBytesPerLine guesses how far from the end n lines start.
	tailBytesPerLine = 512
)

// logsOptions are the flags of `troupe alloc logs`.
type logsOptions struct {
	allocID, task, logType string
	follow, tail           bool
	lines                  int
}

// allocLogsCommand is `troupe alloc logs [-stderr] [-f] [-tail] [-n N] ID [TASK]`.
func allocLogsCommand(args []string, stdout, stderr io.Writer) int {
	m := newMeta("alloc logs", stdout, stderr, false)
	errLog := m.fs.Bool("stderr", false, "show stderr instead of stdout")
	follow := m.fs.Bool("f", false, "follow the log until interrupted")
	tail := m.fs.Bool("tail", false, "show the end of the log (10 lines unless -n)")
	lines := m.fs.Int("n", -1, "with -tail, how many lines (implies -tail)")
	rest, code, ok := m.parse(args)
	if !ok {
		return code
	}
	if len(rest) < 1 || len(rest) > 2 {
		return m.usageError("ID [TASK]")
	}
	c, alloc, code, ok := m.allocClient(rest[0])
	if !ok {
		return code
	}
	task, err := pickTask(alloc, rest[1:])
	if err != nil {
		return m.fail("choosing the task", err)
	}
	opts := logsOptions{allocID: alloc.ID, task: task, logType: "stdout", follow: *follow,
		tail: *tail || *lines >= 0, lines: *lines}
	if *errLog {
		opts.logType = "stderr"
	}
	if opts.lines < 0 {
		opts.lines = defaultTailLines
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	if err := streamLogs(ctx, c, opts, m.stdout); err != nil && ctx.Err() == nil {
		return m.fail("reading logs", err)
	}
	return exitOK
}

// pickTask is the named task, or the allocation's only task.
func pickTask(a *messages.Allocation, named []string) (string, error) {
	tasks := allocTasks(a)
	if len(named) == 1 {
		for _, t := range tasks {
			if t == named[0] {
				return t, nil
			}
		}
		return "", fmt.Errorf("%w: allocation %s has no task %q (tasks: %s)",
			errNoTask, shortID(a.ID), named[0], strings.Join(tasks, ", "))
	}
	if len(tasks) == 1 {
		return tasks[0], nil
	}
	return "", fmt.Errorf("%w: allocation %s runs %d tasks (%s); name one",
		errNoTask, shortID(a.ID), len(tasks), strings.Join(tasks, ", "))
}

// streamLogs copies the log to w as opts ask.
func streamLogs(ctx context.Context, c *api.Client, o logsOptions, w io.Writer) error {
	fs := c.AllocFS()
	if !o.tail {
		return copyLog(ctx, fs, o, api.OriginStart, 0, o.follow, w)
	}
	if !o.follow {
		var buf bytes.Buffer
		if err := copyLog(ctx, fs, o, api.OriginEnd, int64(o.lines*tailBytesPerLine), false, &buf); err != nil {
			return err
		}
		_, err := w.Write(lastLines(buf.Bytes(), o.lines))
		return err
	}
	// Read what is there, show its end, then follow from exactly there.
	var buf bytes.Buffer
	if err := copyLog(ctx, fs, o, api.OriginStart, 0, false, &buf); err != nil {
		return err
	}
	if _, err := w.Write(lastLines(buf.Bytes(), o.lines)); err != nil {
		return err
	}
	return copyLog(ctx, fs, o, api.OriginStart, int64(buf.Len()), true, w)
}

func copyLog(ctx context.Context, fs *api.AllocFS, o logsOptions, origin string, offset int64, follow bool, w io.Writer) error {
	rc, err := fs.Logs(ctx, o.allocID, o.task, o.logType, follow, origin, offset)
	if err != nil {
		return err
	}
	defer rc.Close()
	if _, err := io.Copy(w, rc); err != nil && !errors.Is(err, context.Canceled) {
		return err
	}
	return nil
}

// lastLines is the last n lines of data (a final newline ends the last line).
func lastLines(data []byte, n int) []byte {
	if n <= 0 {
		return nil
	}
	end := len(data)
	if end > 0 && data[end-1] == '\n' {
		end--
	}
	for i := end - 1; i >= 0; i-- {
		if data[i] == '\n' {
			n--
			if n == 0 {
				return data[i+1:]
			}
		}
	}
	return data
}
