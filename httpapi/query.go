package httpapi

import (
	"context"
	"fmt"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"
)

// Blocking queries wait ?wait= (Nomad's default 5 minutes), at most
// Nomad's 10 minutes.
const (
	defaultQueryWait = 5 * time.Minute
	maxQueryWait     = 10 * time.Minute
	// maxQueryValue bounds one query value (IDs, prefixes, names);
	// maxFilterValue a ?filter= expression (one that lists IDs is long).
	maxQueryValue  = 1024
	maxFilterValue = 16 << 10
)

// presenceParams are true when given with no value (?stale, ?pretty), as
// Nomad reads them; boolParams are false then. Both refuse a value that
// is not a boolean.
var (
	presenceParams = []string{"stale", "pretty"}
	boolParams     = []string{"purge", "diffs", "plain", "follow", "force", "verbose", "reverse"}
	// uintParams are the whole numbers some endpoints take.
	uintParams = []string{"index", "offset", "cas"}
)

// queryOptions are the query parameters every endpoint shares, parsed and
// checked once, before the handler runs.
type queryOptions struct {
	index  uint64 // ?index=, 0 when absent: no blocking
	wait   time.Duration
	stale  bool
	pretty bool
	list   listQuery // ?filter=, ?per_page=, ?next_token=, ?reverse=
}

type queryKey struct{}

// parseQuery checks a request's query string: every value valid UTF-8
// with no NUL and at most maxQueryValue bytes, the shared parameters
// given once each and well formed. Any problem is an error naming the
// parameter (a 400): a query value that does not parse never falls back
// to a default.
func parseQuery(raw string) (*queryOptions, error) {
	q, err := url.ParseQuery(raw)
	if err != nil {
		return nil, fmt.Errorf("invalid query string: %v", err)
	}
	for name, vs := range q {
		for _, v := range vs {
			if p := queryTextProblem(name, v); p != "" {
				return nil, fmt.Errorf("query parameter %s", p)
			}
		}
	}
	opts := &queryOptions{wait: defaultQueryWait}
	for _, name := range append(append(append(append([]string{"wait", "namespace", "region", "prefix"}, listParams...), presenceParams...), boolParams...), uintParams...) {
		if len(q[name]) > 1 {
			return nil, fmt.Errorf("query parameter %s is given %d times; give it once", name, len(q[name]))
		}
	}
	for _, name := range uintParams {
		if v := q.Get(name); v != "" {
			if _, err := strconv.ParseUint(v, 10, 64); err != nil {
				return nil, fmt.Errorf("invalid %s %q: want a whole number", name, v)
			}
		}
	}
	opts.index, _ = strconv.ParseUint(q.Get("index"), 10, 64)
	if v, given := q["wait"]; given {
		if opts.wait, err = parseWait(v[0]); err != nil {
			return nil, err
		}
	}
	for _, name := range presenceParams {
		if _, given := q[name]; !given {
			continue
		}
		on, err := parseBool(name, q.Get(name), true)
		if err != nil {
			return nil, err
		}
		if name == "stale" {
			opts.stale = on
		} else {
			opts.pretty = on
		}
	}
	for _, name := range boolParams {
		if _, err := parseBool(name, q.Get(name), false); err != nil {
			return nil, err
		}
	}
	if opts.list, err = parseListQuery(q); err != nil {
		return nil, err
	}
	return opts, nil
}

func queryTextProblem(name, v string) string {
	shownName := name
	if len(shownName) > 64 || !utf8.ValidString(shownName) {
		shownName = strconv.QuoteToASCII(shownName[:min(len(shownName), 64)])
	}
	switch {
	case !utf8.ValidString(name) || !utf8.ValidString(v):
		return shownName + " is not valid UTF-8"
	case strings.ContainsRune(name, 0) || strings.ContainsRune(v, 0):
		return shownName + " contains a NUL character"
	case len(v) > valueLimit(name):
		return fmt.Sprintf("%s is %d bytes long, over the limit of %d", shownName, len(v), valueLimit(name))
	}
	return ""
}

func valueLimit(name string) int {
	if name == "filter" {
		return maxFilterValue
	}
	return maxQueryValue
}

// parseWait reads ?wait= as Nomad does: a Go duration ("30s") or a whole
// number of milliseconds; negative is an error, longer than
// maxQueryWait is cut to it.
func parseWait(s string) (time.Duration, error) {
	d, err := time.ParseDuration(s)
	if err != nil {
		ms, msErr := strconv.ParseInt(s, 10, 64)
		if msErr != nil {
			return 0, fmt.Errorf("invalid wait %q: want a duration such as \"30s\" or milliseconds", s)
		}
		if ms > int64(maxQueryWait/time.Millisecond) {
			ms = int64(maxQueryWait / time.Millisecond)
		}
		d = time.Duration(ms) * time.Millisecond
	}
	if d < 0 {
		return 0, fmt.Errorf("invalid wait %q: must not be negative", s)
	}
	return min(d, maxQueryWait), nil
}

// parseBool reads a boolean query value; empty means empty.
func parseBool(name, v string, empty bool) (bool, error) {
	if v == "" {
		return empty, nil
	}
	b, err := strconv.ParseBool(v)
	if err != nil {
		return false, fmt.Errorf("invalid %s %q: want true or false", name, v)
	}
	return b, nil
}

// withQuery parses r's query into its context; a problem is a 400.
func withQuery(r *http.Request) (*http.Request, error) {
	opts, err := parseQuery(r.URL.RawQuery)
	if err != nil {
		return nil, codeErr(http.StatusBadRequest, "%v", err)
	}
	return r.WithContext(context.WithValue(r.Context(), queryKey{}, opts)), nil
}

// optsOf returns the parsed query of a request that went through
// withQuery (the defaults otherwise).
func optsOf(r *http.Request) *queryOptions {
	if o, ok := r.Context().Value(queryKey{}).(*queryOptions); ok {
		return o
	}
	return &queryOptions{wait: defaultQueryWait}
}

// boolParam reads a boolean parameter withQuery has checked.
func boolParam(r *http.Request, name string) bool {
	v, _ := strconv.ParseBool(r.URL.Query().Get(name))
	return v
}
