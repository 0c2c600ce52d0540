package main

import (
	"bytes"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"github.com/troupe-dev/troupe/messages"
)

func TestDispatch(t *testing.T) {
	tests := []struct {
		name       string
		args       []string
		code       int
		out, err   string
		notInUsage string
	}{
		{name: "version", args: []string{"version"}, out: "troupe v" + version + "\n"},
		{name: "no args", args: nil, code: 1, err: "Usage: troupe <command>", notInUsage: "executor"},
		{name: "logmon hidden", args: nil, code: 1, err: "Usage: troupe <command>", notInUsage: "logmon"},
		{name: "help", args: []string{"-h"}, out: "    job "},
		{name: "unknown", args: []string{"nope"}, code: 1, err: `Error: unknown command "nope" for "troupe"`},
		{name: "group usage", args: []string{"operator", "raft"}, code: 1, err: "list-peers"},
		{name: "unknown sub", args: []string{"job", "frobnicate"}, code: 1, err: `unknown command "frobnicate" for "troupe job"`},
		{name: "bad flag", args: []string{"job", "status", "-nope"}, code: 1, err: "flag provided but not defined: -nope"},
		{name: "command help", args: []string{"alloc", "logs", "-h"}, code: 0, err: "-stderr"},
		{name: "wrong args", args: []string{"alloc", "status"}, code: 1, err: "this command takes ID"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var stdout, stderr bytes.Buffer
			code := run(tt.args, &stdout, &stderr)
			require.Equal(t, tt.code, code)
			require.Contains(t, stdout.String(), tt.out)
			require.Contains(t, stderr.String(), tt.err)
			if tt.notInUsage != "" {
				require.NotContains(t, stderr.String(), tt.notInUsage)
			}
		})
	}
}

func TestAddressSources(t *testing.T) {
	f := newFakeAPI(t)
	f.jobs["web"] = &messages.Job{ID: "web", Type: "service"}
	dead := "http://127.0.0.1:1" // nothing listens there
	tests := []struct {
		name string
		env  string
		args []string
		code int
	}{
		{name: "TROUPE_ADDR", env: f.srv.URL, args: []string{"job", "status"}},
		{name: "-address beats TROUPE_ADDR", env: dead, args: []string{"job", "status", "-address", f.srv.URL}},
		{name: "TROUPE_ADDR used, unreachable", env: dead, args: []string{"job", "status"}, code: 1},
		{name: "-address used, unreachable", env: f.srv.URL, args: []string{"job", "status", "-address", dead}, code: 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			getenv = func(k string) string {
				if k == "TROUPE_ADDR" {
					return tt.env
				}
				return ""
			}
			t.Cleanup(func() { getenv = func(string) string { return "" } })
			var stdout, stderr bytes.Buffer
			code := run(tt.args, &stdout, &stderr)
			require.Equal(t, tt.code, code, stderr.String())
			if tt.code == 0 {
				require.Contains(t, stdout.String(), "web")
			} else {
				require.Contains(t, stderr.String(), "Error querying jobs:")
			}
		})
	}
}

func TestTimeAgo(t *testing.T) {
	tests := []struct {
		d    time.Duration
		want string
	}{
		{0, "0s ago"},
		{1400 * time.Millisecond, "1s ago"},
		{59 * time.Second, "59s ago"},
		{61 * time.Second, "1m1s ago"},
		{2*time.Hour + 5*time.Minute + 9*time.Second, "2h5m ago"},
		{49 * time.Hour, "2d1h ago"},
		{-5 * time.Second, "in 5s"},
	}
	for _, tt := range tests {
		t.Run(tt.want, func(t *testing.T) {
			require.Equal(t, tt.want, timeAgo(ago(tt.d)))
		})
	}
	require.Equal(t, "<none>", timeAgo(0))
	require.Equal(t, "<none>", formatTime(0))
}

func TestLastLines(t *testing.T) {
	tests := []struct {
		data string
		n    int
		want string
	}{
		{"a\nb\nc\n", 2, "b\nc\n"},
		{"a\nb\nc", 2, "b\nc"},
		{"a\nb\n", 5, "a\nb\n"},
		{"a\nb\n", 0, ""},
		{"", 3, ""},
	}
	for _, tt := range tests {
		t.Run(tt.data, func(t *testing.T) {
			require.Equal(t, tt.want, string(lastLines([]byte(tt.data), tt.n)))
		})
	}
}

func TestWriteKVAndTable(t *testing.T) {
	var b bytes.Buffer
	writeKV(&b, []kv{{"ID", "x"}, {"Long Name", "y"}})
	require.Equal(t, "ID        = x\nLong Name = y\n", b.String())
	b.Reset()
	writeTable(&b, []string{"A", "Bee"}, [][]string{{"long value", "1"}})
	require.Equal(t, "A           Bee\nlong value  1\n", b.String())
}
