package httpapi

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/stretchr/testify/require"
)

func TestParseQuery(t *testing.T) {
	ok := []struct {
		raw    string
		index  uint64
		wait   time.Duration
		stale  bool
		pretty bool
	}{
		{"", 0, defaultQueryWait, false, false},
		{"index=7&wait=30s", 7, 30 * time.Second, false, false},
		{"index=7&wait=1500", 7, 1500 * time.Millisecond, false, false},
		{"wait=1h", 0, maxQueryWait, false, false},
		{"wait=99999999999999", 0, maxQueryWait, false, false},
		{"wait=0", 0, 0, false, false},
		{"stale", 0, defaultQueryWait, true, false},
		{"stale=true&pretty", 0, defaultQueryWait, true, true},
		{"stale=false&pretty=0", 0, defaultQueryWait, false, false},
		{"purge=true&diffs=1&prefix=ab", 0, defaultQueryWait, false, false},
	}
	for _, c := range ok {
		o, err := parseQuery(c.raw)
		require.NoError(t, err, c.raw)
		require.Equal(t, c.index, o.index, c.raw)
		require.Equal(t, c.wait, o.wait, c.raw)
		require.Equal(t, c.stale, o.stale, c.raw)
		require.Equal(t, c.pretty, o.pretty, c.raw)
	}
	bad := map[string]string{
		"wait=-1s":                               `invalid wait "-1s": must not be negative`,
		"wait=-1":                                `invalid wait "-1": must not be negative`,
		"wait=abc":                               `invalid wait "abc"`,
		"stale=maybe":                            `invalid stale "maybe"`,
		"purge=maybe":                            `invalid purge "maybe"`,
		"follow=2":                               `invalid follow "2"`,
		"index=abc":                              `invalid index "abc"`,
		"index=-1":                               `invalid index "-1"`,
		"offset=1e3":                             `invalid offset "1e3"`,
		"index=1&index=2":                        "index is given 2 times",
		"prefix=a%00b":                           "prefix contains a NUL",
		"prefix=%ff":                             "prefix is not valid UTF-8",
		"prefix=" + strings.Repeat("a", 2000):    "over the limit of 1024",
		"%zz=1":                                  "invalid query string",
		"namespace=a&namespace=b":                "namespace is given 2 times",
		strings.Repeat("k", 100) + "=%ff":        "is not valid UTF-8",
		"region=global&region=global&stale=true": "region is given 2 times",
	}
	for raw, says := range bad {
		_, err := parseQuery(raw)
		require.ErrorContains(t, err, says, raw)
	}
}

// TestQueryRefusedBeforeTheHandler: a bad query is a 400 whatever the
// route, and the handler never runs.
func TestQueryRefusedBeforeTheHandler(t *testing.T) {
	s := New(&fakeBackend{}, nil, Options{})
	ran := false
	s.mux.HandleFunc("GET /probe", func(http.ResponseWriter, *http.Request) { ran = true })
	rec := httptest.NewRecorder()
	s.ServeHTTP(rec, httptest.NewRequest("GET", "/probe?wait=-1s", nil))
	require.Equal(t, http.StatusBadRequest, rec.Code)
	require.Contains(t, rec.Body.String(), "must not be negative")
	require.False(t, ran)
}

// TestPanicIsA500: a handler's panic is answered, not a dropped
// connection.
func TestPanicIsA500(t *testing.T) {
	s := New(&fakeBackend{}, nil, Options{})
	s.mux.HandleFunc("GET /boom", func(http.ResponseWriter, *http.Request) { panic("kaboom") })
	rec := httptest.NewRecorder()
	s.ServeHTTP(rec, httptest.NewRequest("GET", "/boom", nil))
	require.Equal(t, http.StatusInternalServerError, rec.Code)
	require.Contains(t, rec.Body.String(), "kaboom")
}

// FuzzParseQuery: no query string panics the parser, and whatever it
// accepts is within its bounds.
func FuzzParseQuery(f *testing.F) {
	for _, seed := range []string{"", "index=1&wait=5s", "wait=-1s", "wait=-1", "wait=abc", "stale=maybe",
		"purge=maybe", "stale", "pretty=true", "prefix=%00", "%ff=1", "index=18446744073709551616", "wait=9223372036854775807",
		"wait=1e9", "a=1&a=2;b", "index=1&index=1"} {
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, raw string) {
		o, err := parseQuery(raw)
		if err != nil {
			require.True(t, utf8.ValidString(err.Error()) || !utf8.ValidString(raw))
			return
		}
		require.GreaterOrEqual(t, o.wait, time.Duration(0))
		require.LessOrEqual(t, o.wait, maxQueryWait)
	})
}
