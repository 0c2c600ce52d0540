package httpapi

import (
	"encoding/json"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/troupe-dev/troupe/api"
)

// TestLogsReadRotatedFiles: a task whose log was rotated (out.txt.3,
// out.txt.4 beside the plain out.txt) is read across its files, the plain
// file ignored; origin and offset count across files, frames name the
// file and the offset in it, and bad positions are 400s.
func TestLogsReadRotatedFiles(t *testing.T) {
	b := logsBackend{allocDirFixture(t)}
	base := filepath.Join(b.dir, "web", "out.txt")
	require.NoError(t, os.WriteFile(base+".3", []byte("one\ntwo\n"), 0o644))
	require.NoError(t, os.WriteFile(base+".4", []byte("three\n"), 0o644))
	for _, tt := range []struct{ query, want string }{
		{"plain=true", "one\ntwo\nthree\n"},
		{"plain=true&origin=start&offset=4", "two\nthree\n"},
		{"plain=true&origin=end&offset=10", "two\nthree\n"},
		{"plain=true&origin=end&offset=0", ""},
	} {
		code, body, _ := do(t, b, http.MethodGet, "/v1/client/fs/logs/a1?task=web&"+tt.query, "", nil)
		require.Equal(t, http.StatusOK, code, body)
		require.Equal(t, tt.want, body, tt.query)
	}

	code, body, _ := do(t, b, http.MethodGet, "/v1/client/fs/logs/a1?task=web", "", nil)
	require.Equal(t, http.StatusOK, code, body)
	var frames []api.StreamFrame
	dec := json.NewDecoder(strings.NewReader(body))
	for dec.More() {
		var f api.StreamFrame
		require.NoError(t, dec.Decode(&f))
		frames = append(frames, f)
	}
	require.Equal(t, []api.StreamFrame{
		{File: base + ".3", Offset: 8, Data: []byte("one\ntwo\n")},
		{File: base + ".4", Offset: 6, Data: []byte("three\n")},
	}, frames)

	for q, want := range map[string]string{
		"origin=middle": `origin must be "start" or "end"`,
		"offset=-1":     `invalid offset "-1"`,
		"offset=x":      `invalid offset "x"`,
	} {
		code, body, _ := do(t, b, http.MethodGet, "/v1/client/fs/logs/a1?task=web&"+q, "", nil)
		require.Equal(t, http.StatusBadRequest, code, q)
		require.Contains(t, body, want, q)
	}
}
