package main

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/url"
	"os"
	"os/signal"
	"strconv"
)

// errStreamEnded: the agent ended a stream with an error frame.
var errStreamEnded = errors.New("troupe: stream ended by the agent")

// eventStreamCommand is `troupe event stream [-topic T[:key]]... [-index N]`:
// it prints the agent's event stream, one JSON frame a line, until
// interrupted (heartbeats are not printed).
func eventStreamCommand(args []string, stdout, stderr io.Writer) int {
	m := newMeta("event stream", stdout, stderr, false)
	var topics stringList
	m.fs.Var(&topics, "topic", `topic to follow, "Topic" or "Topic:key" (repeatable; default every topic)`)
	index := m.fs.Uint64("index", 0, "raft index to start from (0: the oldest the server holds)")
	c, code, ok := m.parseNone(args)
	if !ok {
		return code
	}
	params := url.Values{"index": {strconv.FormatUint(*index, 10)}}
	for _, t := range topics {
		params.Add("topic", t)
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	body, err := c.Stream(ctx, "/v1/event/stream", params)
	if err != nil {
		return m.fail("opening the event stream", err)
	}
	defer body.Close()
	if err := copyFrames(ctx, body, stdout); err != nil {
		return m.fail("reading the event stream", err)
	}
	return exitOK
}

// copyFrames prints each JSON line of r but the {} heartbeats; an
// {"Error": ...} line ends it with that error.
func copyFrames(ctx context.Context, r io.Reader, w io.Writer) error {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64<<10), 64<<20)
	for sc.Scan() {
		line := sc.Bytes()
		var probe struct{ Error string }
		if json.Unmarshal(line, &probe) == nil && probe.Error != "" {
			return fmt.Errorf("%w: %s", errStreamEnded, probe.Error)
		}
		if string(line) == "{}" {
			continue
		}
		if _, err := fmt.Fprintf(w, "%s\n", line); err != nil {
			return err
		}
	}
	if ctx.Err() != nil {
		return nil
	}
	return sc.Err()
}
