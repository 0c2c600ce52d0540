package main

import (
	"fmt"
	"io"
	"os/exec"
	"strings"
)

// openURL opens u in the desktop's browser (xdg-open); tests replace it.
var openURL = func(u string) error {
	path, err := exec.LookPath("xdg-open")
	if err != nil {
		return err
	}
	cmd := exec.Command(path, u)
	if err := cmd.Start(); err != nil {
		return err
	}
	return cmd.Process.Release()
}

// uiCommand is `troupe ui [-show-url] [PATH]`: it prints the web UI's URL
// on the agent (PATH a page under it, such as jobs/web@default) and opens
// it in a browser when there is a display ($DISPLAY or $WAYLAND_DISPLAY).
func uiCommand(args []string, stdout, stderr io.Writer) int {
	m := newMeta("ui", stdout, stderr, false)
	showOnly := m.fs.Bool("show-url", false, "print the URL without opening a browser")
	rest, code, ok := m.parse(args)
	if !ok {
		return code
	}
	if len(rest) > 1 {
		return m.usageError("[PATH]")
	}
	c, err := m.client()
	if err != nil {
		return m.fail("creating the API client", err)
	}
	u := strings.TrimSuffix(c.Address(), "/") + "/ui/"
	if len(rest) == 1 {
		u += strings.TrimPrefix(strings.TrimPrefix(rest[0], "/"), "ui/")
	}
	if *showOnly {
		fmt.Fprintln(m.stdout, u)
		return exitOK
	}
	if getenv("DISPLAY") == "" && getenv("WAYLAND_DISPLAY") == "" {
		fmt.Fprintf(m.stdout, "%s\n(no display to open a browser on: open the URL yourself)\n", u)
		return exitOK
	}
	fmt.Fprintf(m.stdout, "Opening %s\n", u)
	if err := openURL(u); err != nil {
		return m.fail("opening a browser", err)
	}
	return exitOK
}
