package main

import (
	"context"
	"io"
	"net/url"
	"os"
	"os/signal"
	"strconv"
)

// monitorCommand is `troupe monitor [-log-level L] [-json]`: it prints
// the agent's log lines as they are written, until interrupted.
func monitorCommand(args []string, stdout, stderr io.Writer) int {
	m := newMeta("monitor", stdout, stderr, false)
	level := m.fs.String("log-level", "info", "lowest level to print: trace, debug, info, warn, error")
	asJSON := m.fs.Bool("json", false, "print the lines as JSON")
	c, code, ok := m.parseNone(args)
	if !ok {
		return code
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	body, err := c.Stream(ctx, "/v1/agent/monitor", url.Values{
		"log_level": {*level}, "log_json": {strconv.FormatBool(*asJSON)}, "plain": {"true"}})
	if err != nil {
		return m.fail("opening the monitor", err)
	}
	defer body.Close()
	if _, err := io.Copy(stdout, body); err != nil && ctx.Err() == nil {
		return m.fail("reading the monitor", err)
	}
	return exitOK
}
