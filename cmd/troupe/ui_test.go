package main

import (
	"testing"

	"github.com/stretchr/testify/require"
)

func TestUICommand(t *testing.T) {
	f := newFakeAPI(t)
	code, out, errOut := f.runCLI("ui", "-show-url")
	require.Equal(t, 0, code, errOut)
	require.Equal(t, f.srv.URL+"/ui/\n", out)

	code, out, errOut = f.runCLI("ui", "-show-url", "/ui/jobs/web@default")
	require.Equal(t, 0, code, errOut)
	require.Equal(t, f.srv.URL+"/ui/jobs/web@default\n", out)

	// No display (the tests' environment is empty): the URL and why no
	// browser opened.
	code, out, errOut = f.runCLI("ui")
	require.Equal(t, 0, code, errOut)
	require.Contains(t, out, f.srv.URL+"/ui/\n(no display")

	code, _, errOut = f.runCLI("ui", "a", "b")
	require.Equal(t, 1, code)
	require.Contains(t, errOut, "[PATH]")
}

func TestUICommandOpensBrowser(t *testing.T) {
	f := newFakeAPI(t)
	oldEnv, oldOpen := getenv, openURL
	t.Cleanup(func() { getenv, openURL = oldEnv, oldOpen })
	getenv = func(k string) string {
		if k == "DISPLAY" {
			return ":0"
		}
		return ""
	}
	var opened []string
	openURL = func(u string) error { opened = append(opened, u); return nil }
	code, out, errOut := f.runCLI("ui", "clients")
	require.Equal(t, 0, code, errOut)
	require.Equal(t, []string{f.srv.URL + "/ui/clients"}, opened)
	require.Equal(t, "Opening "+f.srv.URL+"/ui/clients\n", out)
}
