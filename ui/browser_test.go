package ui_test

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/troupe-dev/troupe/httpapi"
	"github.com/troupe-dev/troupe/ui"
	"github.com/troupe-dev/troupe/ui/uitest"
)

// fakeAPI answers the reads the pages make with fixed, Nomad-shaped
// bodies (X-Nomad-Index 1); a blocking read (?index=1) and the event
// stream stay quiet until the client goes away, as a real agent's do
// while nothing changes.
func fakeAPI(t *testing.T, bodies map[string]any) http.Handler {
	mux := http.NewServeMux()
	ui.Routes(mux)
	mux.HandleFunc("GET /v1/event/stream", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusOK)
		w.(http.Flusher).Flush()
		<-r.Context().Done()
	})
	for path, body := range bodies {
		if h, ok := body.(http.Handler); ok {
			mux.Handle("GET "+path, h)
			continue
		}
		raw, err := json.Marshal(body)
		if err != nil {
			t.Fatal(err)
		}
		mux.HandleFunc("GET "+path, func(w http.ResponseWriter, r *http.Request) {
			if r.URL.Query().Get("index") != "" {
				<-r.Context().Done()
				return
			}
			w.Header().Set("X-Nomad-Index", "1")
			w.Header().Set("Content-Type", "application/json")
			_, _ = w.Write(raw)
		})
	}
	return mux
}

func manyAllocs(n int, job, node string) []map[string]any {
	out := make([]map[string]any, n)
	for i := range out {
		out[i] = map[string]any{"ID": fmt.Sprintf("%08x-0000-4000-8000-%012x", i, i), "Namespace": "default",
			"JobID": job, "TaskGroup": "g", "NodeID": node, "NodeName": "n1", "JobVersion": 0,
			"DesiredStatus": "run", "ClientStatus": "running", "CreateIndex": i + 10}
	}
	return out
}

// pages answers a list Nomad pages (/v1/allocations) from
// items as the agent does for the reads the pages make: ?filter= of the
// form Field == "value", items in the order key gives (compared as
// strings), reversed with ?reverse=true, ?per_page= of them, and
// X-Nomad-NextToken when there are more.
func pages(t *testing.T, items []map[string]any, key func(map[string]any) string) http.Handler {
	byField := regexp.MustCompile(`^(\w+) == "([^"]*)"$`)
	items = slices.Clone(items)
	slices.SortStableFunc(items, func(a, b map[string]any) int { return strings.Compare(key(a), key(b)) })
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		q := r.URL.Query()
		if q.Get("index") != "" {
			<-r.Context().Done()
			return
		}
		out := items
		if f := q.Get("filter"); f != "" {
			m := byField.FindStringSubmatch(f)
			if m == nil {
				http.Error(w, "fake: unexpected filter "+f, http.StatusBadRequest)
				return
			}
			out = nil
			for _, it := range items {
				if it[m[1]] == m[2] {
					out = append(out, it)
				}
			}
		}
		if q.Get("reverse") == "true" {
			out = slices.Clone(out)
			slices.Reverse(out)
		}
		if n, err := strconv.Atoi(q.Get("per_page")); err == nil && n < len(out) {
			w.Header().Set("X-Nomad-NextToken", key(out[n]))
			out = out[:n]
		}
		w.Header().Set("X-Nomad-Index", "1")
		w.Header().Set("Content-Type", "application/json")
		if err := json.NewEncoder(w).Encode(out); err != nil {
			t.Errorf("fake %s: %v", r.URL.Path, err)
		}
	})
}

// allocKey is Nomad's paging order of allocations (httpapi/paging.go):
// by create index, then ID.
func allocKey(a map[string]any) string {
	return fmt.Sprintf("%020d.%s", a["CreateIndex"].(int), a["ID"].(string))
}

// TestPagesLoadFastWithManyJobsAndAllocs is a benchmark-style test: it
// opens the pages that list the most (1,000 jobs; a job and a node with
// 10,000 allocations) in headless Chromium and logs how long each took
// to draw its data (the Performance API's troupe:ready mark, from the
// start of navigation). The goal is under 300 ms; the figure is logged,
// not asserted, so a loaded machine does not fail the test.
func TestPagesLoadFastWithManyJobsAndAllocs(t *testing.T) {
	jobs := make([]map[string]any, 1000)
	for i := range jobs {
		jobs[i] = map[string]any{"ID": fmt.Sprintf("job-%04d", i), "Name": fmt.Sprintf("job-%04d", i),
			"Namespace": "default", "Type": "service", "Priority": 50, "Status": "running",
			"JobSummary": map[string]any{"Summary": map[string]any{"g": map[string]any{"Running": 10}}}}
	}
	allocs := manyAllocs(10000, "job-0000", "n1")
	// Compressed as the agent's API and UI are (httpapi.Compress).
	srv := httptest.NewServer(httpapi.Compress(fakeAPI(t, map[string]any{
		"/v1/jobs":                     jobs,
		"/v1/job/job-0000":             map[string]any{"ID": "job-0000", "Type": "service", "Status": "running", "TaskGroups": []any{map[string]any{"Name": "g", "Count": 10000}}},
		"/v1/job/job-0000/versions":    map[string]any{"Versions": []any{map[string]any{"Version": 0, "Stable": true}}},
		"/v1/job/job-0000/deployments": []any{},
		"/v1/job/job-0000/allocations": allocs,
		"/v1/job/job-0000/summary":     map[string]any{"JobID": "job-0000", "Summary": map[string]any{"g": map[string]any{"Running": 10000}}},
		"/v1/node/n1":                  map[string]any{"ID": "n1", "Name": "n1", "Status": "ready"},
		"/v1/node/n1/allocations":      allocs,
		"/v1/allocations":              pages(t, allocs, allocKey),
	})))
	t.Cleanup(srv.Close) // after the browser's cleanup, which ends its blocking reads
	b := uitest.Start(t)
	for _, page := range []struct{ name, path, sel string }{
		{"jobs", "/ui/jobs", `a[href="/ui/jobs/job-0020@default"]`},
		{"job-10000-allocs", "/ui/jobs/job-0000@default", `[data-section=allocations] tbody tr`},
		{"client-10000-allocs", "/ui/clients/n1", `[data-section=allocations] tbody tr`},
	} {
		// The first load fetches and compiles the modules; the second
		// finds them in the browser's cache, as a user's next visit does.
		for _, visit := range []string{"first", "second"} {
			b.Open(t, srv.URL+page.path)
			b.WaitReady(t, 30*time.Second)
			b.WaitFor(t, fmt.Sprintf(`document.querySelector(%q)`, page.sel), 10*time.Second)
			b.WaitComplete(t, 30*time.Second)
			rows := uitest.Eval[int](t, b, `document.querySelectorAll('tbody tr:not(.pad)').length`)
			tm := b.PageTimings(t)
			t.Logf("page %s (%s), %s load: data drawn %.0f ms after navigation started (goal < 300 ms), all of it %.0f ms (modules ran by %.0f ms, last API answer read at %.0f ms; %d table rows in the DOM; %d requests, %.0f KB, of which UI files %d, %.0f KB)",
				page.name, page.path, visit, tm.Ready, tm.Complete, tm.DOMContentLoaded, tm.LastAPIResponse, rows, tm.Requests, tm.TransferKB, tm.Assets, tm.AssetKB)
			for _, r := range b.Breakdown(t) {
				t.Logf("  %s (%.0f KB): sent %.0f, first byte %.0f, last byte %.0f, parsed %.0f, drawn %.0f ms",
					r.Path, r.KB, r.Sent, r.FirstByte, r.LastByte, r.Parsed, r.Drawn)
			}
		}
		b.Screenshot(t, page.name)
	}
}

// TestTokenSentWithEveryRead: a token entered in the header is kept in
// localStorage and sent as X-Nomad-Token with the pages' reads, also
// after a reload.
func TestTokenSentWithEveryRead(t *testing.T) {
	api := fakeAPI(t, map[string]any{"/v1/jobs": []any{}})
	var mu sync.Mutex
	tokens := map[string]bool{}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if strings.HasPrefix(r.URL.Path, "/v1/") {
			mu.Lock()
			tokens[r.Header.Get("X-Nomad-Token")] = true
			mu.Unlock()
		}
		api.ServeHTTP(w, r)
	}))
	t.Cleanup(srv.Close)
	seen := func(tok string) bool {
		mu.Lock()
		defer mu.Unlock()
		return tokens[tok]
	}
	b := uitest.Start(t)
	b.Open(t, srv.URL+"/ui/jobs")
	b.WaitReady(t, 20*time.Second)
	require.True(t, seen(""), "no token yet")

	require.True(t, uitest.Eval[bool](t, b, `(document.getElementById('token').value = 'secret-1') !== ''`))
	b.Click(t, `#token-form button`)
	b.WaitReady(t, 20*time.Second)
	require.True(t, seen("secret-1"), "the entered token is sent")
	require.Equal(t, "secret-1", uitest.Eval[string](t, b, `localStorage.getItem('troupe.token')`))

	mu.Lock()
	clear(tokens)
	mu.Unlock()
	b.Open(t, srv.URL+"/ui/jobs")
	b.WaitReady(t, 20*time.Second)
	require.True(t, seen("secret-1"), "the stored token is sent after a reload")
	require.False(t, seen(""), "no read went without it")
}

// bigActorTree is a canned /v1/actors answer: an agent with nodes*allocs
// allocation actors, each with one task actor, under a node actor each.
func bigActorTree(nodes, allocs int) map[string]any {
	actor := func(path, parent, kind string, children []string) map[string]any {
		return map[string]any{"Path": path, "Parent": parent, "Kind": kind, "Children": children,
			"Phase": "running", "MailboxLen": 0, "Restarts": 0, "LastMessage": "Tick"}
	}
	var out []map[string]any
	var nodePaths []string
	for n := range nodes {
		np := fmt.Sprintf("agent/nodes/n%03d", n)
		nodePaths = append(nodePaths, np)
		var kids []string
		for a := range allocs {
			ap := fmt.Sprintf("%s/allocs/%03d-%05d", np, n, a)
			tp := ap + "/tasks/t"
			kids = append(kids, ap)
			out = append(out, actor(ap, np, "alloc", []string{tp}), actor(tp, ap, "task", nil))
		}
		out = append(out, actor(np, "agent", "node", kids))
	}
	out = append(out, actor("agent", "", "agent", nodePaths))
	return map[string]any{"Node": "n1", "Actors": out}
}

// TestActorTreeVirtualised: a tree of 20,101 actors draws only the rows
// in view (and a few around them), scrolls to its last actor, and an
// allocation's filter finds its actors in it. The draw times are logged.
func TestActorTreeVirtualised(t *testing.T) {
	tree := bigActorTree(100, 100)
	srv := httptest.NewServer(fakeAPI(t, map[string]any{"/v1/actors": tree, "/v1/nodes": []any{}}))
	t.Cleanup(srv.Close)
	b := uitest.Start(t)
	b.Open(t, srv.URL+"/ui/actors")
	b.WaitReady(t, 30*time.Second)
	tm := b.PageTimings(t)
	require.Contains(t, b.Text(t), "20101 actors")
	inDOM := uitest.Eval[int](t, b, `document.querySelectorAll('ul.tree-rows li').length`)
	require.Less(t, inDOM, 100, "only the rows in view are drawn")
	require.Greater(t, inDOM, 10)
	require.Equal(t, "agent", uitest.Eval[string](t, b, `document.querySelector('ul.tree-rows li').dataset.path`))
	t.Logf("20101 actors: drawn %.0f ms after navigation started (API answer read at %.0f ms), %d rows in the DOM",
		tm.Ready, tm.LastAPIResponse, inDOM)

	last := "agent/nodes/n099/allocs/099-00099/tasks/t"
	uitest.Eval[bool](t, b, `(() => {
  const box = document.querySelector('.tree-scroll'), t0 = performance.now();
  box.scrollTop = box.scrollHeight;
  requestAnimationFrame(() => requestAnimationFrame(() => { window.scrolledIn = performance.now() - t0; }));
  return true;
})()`)
	b.WaitFor(t, `window.scrolledIn !== undefined`, 5*time.Second)
	took := uitest.Eval[float64](t, b, `window.scrolledIn`)
	b.WaitFor(t, fmt.Sprintf(`document.querySelector('li[data-path=%q]')`, last), 5*time.Second)
	require.Less(t, uitest.Eval[int](t, b, `document.querySelectorAll('ul.tree-rows li').length`), 100)
	t.Logf("scrolled to the last actor: drawn within %.0f ms (two frames)", took)
	b.Screenshot(t, "actors-20101")

	b.Open(t, srv.URL+"/ui/actors?alloc=042-00007")
	b.WaitReady(t, 30*time.Second)
	paths := uitest.Eval[[]string](t, b, `[...document.querySelectorAll('ul.tree-rows li')].map((li) => li.dataset.path)`)
	require.Equal(t, []string{"agent", "agent/nodes/n042", "agent/nodes/n042/allocs/042-00007",
		"agent/nodes/n042/allocs/042-00007/tasks/t"}, paths)
}

// TestAllocTableVirtualised: a job's 10,000 allocations are drawn as a
// table of the rows in view (and a few around them), newest first, rows
// of the height the windowing assumes; scrolling to its end draws the
// oldest one, and the middle the ones there.
func TestAllocTableVirtualised(t *testing.T) {
	allocs := manyAllocs(10000, "job-0000", "n1")
	srv := httptest.NewServer(fakeAPI(t, map[string]any{
		"/v1/job/job-0000":             map[string]any{"ID": "job-0000", "Type": "service", "Status": "running"},
		"/v1/job/job-0000/versions":    map[string]any{"Versions": []any{}},
		"/v1/job/job-0000/deployments": []any{},
		"/v1/job/job-0000/allocations": allocs,
		"/v1/job/job-0000/summary":     map[string]any{"JobID": "job-0000", "Summary": map[string]any{"g": map[string]any{"Running": 10000}}},
	}))
	t.Cleanup(srv.Close)
	b := uitest.Start(t)
	b.Open(t, srv.URL+"/ui/jobs/job-0000@default")
	b.WaitReady(t, 30*time.Second)
	require.Equal(t, []string{"g", "0", "0", "10000", "0", "0", "0", "0"}, uitest.Eval[[]string](t, b,
		`[...document.querySelectorAll('[data-section=summary] tbody td')].map((td) => td.textContent)`), "the counts by status")
	const rowsSel = `[data-section=allocations] tbody tr[data-row]`
	b.WaitFor(t, `document.querySelector('[data-section=allocations] [data-count]').textContent === '10000 in all'`, 10*time.Second)
	inDOM := func() int { return uitest.Eval[int](t, b, `document.querySelectorAll('`+rowsSel+`').length`) }
	require.Less(t, inDOM(), 100, "only the rows in view are drawn")
	require.Greater(t, inDOM(), 10)
	require.Equal(t, 29.0, uitest.Eval[float64](t, b, `document.querySelector('`+rowsSel+`').getBoundingClientRect().height`),
		"a row is as high as dom.js TABLE_ROW")
	shown := func(row int) string {
		return uitest.Eval[string](t, b, fmt.Sprintf(`document.querySelector('%s[data-row="%d"] td')?.textContent ?? ''`, rowsSel, row))
	}
	require.Equal(t, "0000270f", shown(0), "newest first")

	scroll := func(to string) {
		uitest.Eval[bool](t, b, `(() => { const box = document.querySelector('[data-section=allocations] .rows-scroll'); box.scrollTop = `+to+`; return true })()`)
	}
	scroll("box.scrollHeight")
	b.WaitFor(t, `document.querySelector('`+rowsSel+`[data-row="9999"]')`, 5*time.Second)
	require.Equal(t, "00000000", shown(9999), "the oldest allocation is last")
	require.Less(t, inDOM(), 100)
	// The row at the top of the box is the one the scroll position says.
	visible := `(() => { const box = document.querySelector('[data-section=allocations] .rows-scroll');
  const top = box.getBoundingClientRect().top + box.querySelector('thead').getBoundingClientRect().height + 1;
  return Number(document.elementFromPoint(box.getBoundingClientRect().left + 5, top).closest('tr').dataset.row) })()`
	scroll("5000 * 29")
	b.WaitFor(t, `document.querySelector('`+rowsSel+`[data-row="5000"]')`, 5*time.Second)
	require.InDelta(t, 5000, uitest.Eval[int](t, b, visible), 1, "the rows are where the scroll position puts them")
	require.Equal(t, fmt.Sprintf("%08x", 9999-5000), shown(5000))
	b.Screenshot(t, "job-10000-allocs-scrolled")
}

// TestLongListDrawsFirstRowsFirst: a node's allocations draw the newest
// ones from one page of /v1/allocations while the whole list is still
// on its way (the page is ready then), and all of them once it is in.
func TestLongListDrawsFirstRowsFirst(t *testing.T) {
	allocs := manyAllocs(1000, "web", "n1")
	raw, err := json.Marshal(allocs)
	require.NoError(t, err)
	release := make(chan struct{})
	srv := httptest.NewServer(fakeAPI(t, map[string]any{
		"/v1/node/n1":     map[string]any{"ID": "n1", "Name": "n1", "Status": "ready"},
		"/v1/allocations": pages(t, allocs, allocKey),
		"/v1/node/n1/allocations": http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			select {
			case <-release:
			case <-r.Context().Done():
				return
			}
			if r.URL.Query().Get("index") != "" {
				<-r.Context().Done()
				return
			}
			w.Header().Set("X-Nomad-Index", "1")
			_, _ = w.Write(raw)
		}),
	}))
	t.Cleanup(srv.Close)
	b := uitest.Start(t)
	b.Open(t, srv.URL+"/ui/clients/n1")
	b.WaitReady(t, 30*time.Second)
	count := `document.querySelector('[data-section=allocations] [data-count]').textContent`
	require.Equal(t, "the first 60; reading the others…", uitest.Eval[string](t, b, count))
	firstCells := `[...document.querySelectorAll('[data-section=allocations] tbody tr[data-row] td:first-child')].map((td) => td.textContent)`
	shown := uitest.Eval[[]string](t, b, firstCells)
	require.Len(t, shown, 60)
	require.Equal(t, []string{"000003e7", "000003e6"}, shown[:2], "newest first")
	require.Equal(t, "", uitest.Eval[string](t, b, `document.body.dataset.complete`))

	close(release)
	b.WaitComplete(t, 10*time.Second)
	require.Equal(t, "1000 in all", uitest.Eval[string](t, b, count))
	require.Equal(t, shown[:30], uitest.Eval[[]string](t, b, firstCells)[:30], "the rows in view stay")
}
