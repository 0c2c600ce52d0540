package httpapi

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"

	"github.com/hashicorp/go-bexpr"
	nomad "github.com/hashicorp/nomad/api"
	"github.com/stretchr/testify/require"

	"github.com/troupe-dev/troupe/api"
	"github.com/troupe-dev/troupe/messages"
)

func TestParseListQuery(t *testing.T) {
	o, err := parseQuery(`filter=Status+%3D%3D+"running"&per_page=3&next_token=12.ab&reverse=true`)
	require.NoError(t, err)
	require.NotNil(t, o.list.filter)
	require.Equal(t, listQuery{filter: o.list.filter, expr: `Status == "running"`, perPage: 3, next: "12.ab", reverse: true}, o.list)
	o, err = parseQuery("")
	require.NoError(t, err)
	require.Equal(t, listQuery{}, o.list)
	long := strings.Repeat(`ID == "x" or `, 1000) + `ID == "y"`
	o, err = parseQuery("filter=" + url.QueryEscape(long))
	require.NoError(t, err, "a filter may be longer than other values")
	require.NotNil(t, o.list.filter)
	for raw, want := range map[string]string{
		"filter=" + strings.Repeat("x", maxFilterValue+1): "query parameter filter is 16385 bytes long, over the limit of 16384",
		`filter=Status+%3D%3D`:                            "failed to read filter expression: 1:10",
		`filter=CreateIndex+>+3`:                          "failed to read filter expression:",
		"per_page=-1":                                     `invalid per_page "-1"`,
		"per_page=ten":                                    `invalid per_page "ten"`,
		"per_page=99999999999":                            `invalid per_page "99999999999"`,
		"reverse=maybe":                                   `invalid reverse "maybe"`,
		"filter=ID+is+empty&filter=x":                     "query parameter filter is given 2 times",
		"per_page=1&per_page=2":                           "query parameter per_page is given 2 times",
	} {
		_, err := parseQuery(raw)
		require.ErrorContains(t, err, want, raw)
	}
}

// TestFilterSeesNomadsFields: an expression is evaluated against the JSON
// we answer, with the fields the encoder leaves out when empty filled in,
// so that it behaves as on Nomad's structs.
func TestFilterSeesNomadsFields(t *testing.T) {
	web := &api.JobListStub{ID: "web", Namespace: "default", Status: "running", Meta: map[string]string{"team": "a"}}
	batch := &api.JobListStub{ID: "batch", Namespace: "default", Status: "dead", ParentID: "p"}
	for _, tt := range []struct {
		expr string
		want []string
	}{
		{`Status == "running"`, []string{"web"}},
		{`Status != "dead"`, []string{"web"}},
		{`Meta.team == "a"`, []string{"web"}},
		{`Meta.team != "a"`, []string{"batch"}}, // no Meta: not present
		{`Meta is empty`, []string{"batch"}},
		{`ParentID == ""`, []string{"web"}}, // left out of web's JSON
		{`Stop == false and Priority == 0`, []string{"web", "batch"}},
		{`ID matches "^b"`, []string{"batch"}},
	} {
		ev, err := bexpr.CreateEvaluator(tt.expr)
		require.NoError(t, err, tt.expr)
		r := requestWith(listQuery{filter: ev})
		got, err := filtered(r, []*api.JobListStub{web, batch})
		require.NoError(t, err, tt.expr)
		var ids []string
		for _, j := range got {
			ids = append(ids, j.ID)
		}
		require.Equal(t, tt.want, ids, tt.expr)
	}
	// A field the objects do not have is a 400 naming it.
	ev, err := bexpr.CreateEvaluator(`Colour == "red"`)
	require.NoError(t, err)
	_, err = filtered(requestWith(listQuery{filter: ev}), []*api.JobListStub{web})
	var he *HTTPError
	require.ErrorAs(t, err, &he)
	require.Equal(t, http.StatusBadRequest, he.Code)
	require.Contains(t, he.Msg, `failed to read filter expression`)
	require.Contains(t, he.Msg, `"Colour"`)
}

// TestFilterEmbeddedAllocation: the whole allocations of
// /v1/node/:id/allocations (a wrapper around the message) are filtered by
// the message's fields.
func TestFilterEmbeddedAllocation(t *testing.T) {
	a := newAllocJSON(&messages.Allocation{ID: "a1", JobID: "web", ClientStatus: "running"})
	b := newAllocJSON(&messages.Allocation{ID: "a2", JobID: "api"})
	ev, err := bexpr.CreateEvaluator(`JobID == "web" and ClientStatus == "running" and NodeID == ""`)
	require.NoError(t, err)
	got, err := filtered(requestWith(listQuery{filter: ev}), []*allocJSON{a, b})
	require.NoError(t, err)
	require.Equal(t, []*allocJSON{a}, got)
}

func requestWith(lq listQuery) *http.Request {
	r := httptest.NewRequest(http.MethodGet, "/v1/x", nil)
	return r.WithContext(context.WithValue(r.Context(), queryKey{}, &queryOptions{list: lq}))
}

type item struct {
	ID          string
	CreateIndex uint64
	Odd         bool
}

var itemOrder = byCreateIndex(func(i *item) uint64 { return i.CreateIndex }, func(i *item) string { return i.ID })

// walk pages through items with lq, returning the IDs of each page.
func walk(t *testing.T, items []*item, lq listQuery) [][]string {
	t.Helper()
	var pages [][]string
	for range len(items) + 2 {
		w := httptest.NewRecorder()
		got, err := paged(w, requestWith(lq), items, itemOrder)
		require.NoError(t, err)
		var ids []string
		for _, it := range got {
			ids = append(ids, it.ID)
		}
		pages = append(pages, ids)
		if lq.next = w.Header().Get(nextTokenHeader); lq.next == "" {
			return pages
		}
	}
	t.Fatalf("the walk did not end: %v", pages)
	return nil
}

func TestPaged(t *testing.T) {
	var items []*item
	// Create indexes 1..10 listed out of order; 9 and 10 sort after 1 as
	// numbers, not as text.
	for _, n := range []uint64{10, 3, 1, 7, 9, 2, 8, 4, 6, 5} {
		items = append(items, &item{ID: fmt.Sprintf("i%02d", n), CreateIndex: n, Odd: n%2 == 1})
	}
	require.Equal(t, [][]string{{"i01", "i02", "i03", "i04", "i05", "i06", "i07", "i08", "i09", "i10"}},
		walk(t, items, listQuery{}))
	require.Equal(t, [][]string{{"i01", "i02", "i03"}, {"i04", "i05", "i06"}, {"i07", "i08", "i09"}, {"i10"}},
		walk(t, items, listQuery{perPage: 3}))
	require.Equal(t, [][]string{{"i10", "i09", "i08", "i07"}, {"i06", "i05", "i04", "i03"}, {"i02", "i01"}},
		walk(t, items, listQuery{perPage: 4, reverse: true}))
	odd, err := bexpr.CreateEvaluator("Odd == true")
	require.NoError(t, err)
	require.Equal(t, [][]string{{"i01", "i03"}, {"i05", "i07"}, {"i09"}},
		walk(t, items, listQuery{filter: odd, perPage: 2}))

	// The token names the next item: the page starts there.
	w := httptest.NewRecorder()
	_, err = paged(w, requestWith(listQuery{perPage: 5}), items, itemOrder)
	require.NoError(t, err)
	require.Equal(t, "6.i06", w.Header().Get(nextTokenHeader))
	// A token whose item has gone starts at the next one after it.
	got, err := paged(httptest.NewRecorder(), requestWith(listQuery{next: "6.i06x", perPage: 1}), items, itemOrder)
	require.NoError(t, err)
	require.Equal(t, "i07", got[0].ID)
	// A token past the end is an empty page.
	got, err = paged(httptest.NewRecorder(), requestWith(listQuery{next: "99.z"}), items, itemOrder)
	require.NoError(t, err)
	require.Empty(t, got)

	_, err = paged(httptest.NewRecorder(), requestWith(listQuery{next: "nonsense"}), items, itemOrder)
	require.ErrorContains(t, err, `invalid next_token "nonsense"`)
}

// TestFilterAndPagingWithNomadClient drives ?filter=, ?per_page= and
// ?next_token= through Nomad's client, against the real state.
func TestFilterAndPagingWithNomadClient(t *testing.T) {
	b := newFSMBackend()
	c := nomadAgainst(t, b)
	const n = 7
	for i := range n {
		job := nsJob(fmt.Sprintf("job-%d", i))
		job.Meta = map[string]string{"tier": []string{"web", "db"}[i%2]}
		_, _, err := c.Jobs().Register(job, nil)
		require.NoError(t, err)
	}
	ids := func(jobs []*nomad.JobListStub) []string {
		var out []string
		for _, j := range jobs {
			out = append(out, j.ID)
		}
		return out
	}
	jobs, _, err := c.Jobs().List(&nomad.QueryOptions{Filter: `Meta.tier == "db"`})
	require.NoError(t, err)
	require.Equal(t, []string{"job-1", "job-3", "job-5"}, ids(jobs))
	jobs, _, err = c.Jobs().List(&nomad.QueryOptions{Filter: `Status != "pending" or Meta.tier != "db"`})
	require.NoError(t, err)
	require.Equal(t, []string{"job-0", "job-2", "job-4", "job-6"}, ids(jobs), "jobs stay pending without a scheduler")

	_, _, err = c.Jobs().List(&nomad.QueryOptions{Filter: `Meta.tier ==`})
	require.ErrorContains(t, err, "400")
	require.ErrorContains(t, err, "failed to read filter expression")
	_, _, err = c.Jobs().List(&nomad.QueryOptions{Filter: `Colour == "red"`})
	require.ErrorContains(t, err, `couldn't find key "Colour"`)
	_, _, err = c.Jobs().List(&nomad.QueryOptions{PerPage: -2})
	require.ErrorContains(t, err, `invalid per_page "-2"`)

	// Paging (with and without the filter): every item once, in order,
	// the token ending the walk.
	for _, tt := range []struct {
		filter string
		want   []string
	}{
		{"", []string{"job-0", "job-1", "job-2", "job-3", "job-4", "job-5", "job-6"}},
		{`Meta.tier == "web"`, []string{"job-0", "job-2", "job-4", "job-6"}},
	} {
		var got []string
		q := &nomad.QueryOptions{Filter: tt.filter, PerPage: 3}
		for pages := 1; ; pages++ {
			require.LessOrEqual(t, pages, n, "the walk does not end")
			page, meta, err := c.Jobs().List(q)
			require.NoError(t, err)
			require.LessOrEqual(t, len(page), 3)
			got = append(got, ids(page)...)
			if meta.NextToken == "" {
				break
			}
			q.NextToken = meta.NextToken
		}
		require.Equal(t, tt.want, got, tt.filter)
	}

	// Evaluations page by create index: each registration made one.
	var evalJobs []string
	q := &nomad.QueryOptions{PerPage: 2, Filter: `JobID != "job-3"`}
	for {
		evals, meta, err := c.Evaluations().List(q)
		require.NoError(t, err)
		for _, e := range evals {
			evalJobs = append(evalJobs, e.JobID)
		}
		if q.NextToken = meta.NextToken; q.NextToken == "" {
			break
		}
	}
	// (Nomad's client sorts each page newest first.)
	require.ElementsMatch(t, []string{"job-0", "job-1", "job-2", "job-4", "job-5", "job-6"}, evalJobs)
	evals, _, err := c.Jobs().Evaluations("job-3", &nomad.QueryOptions{Filter: `Status == "pending"`})
	require.NoError(t, err)
	require.Len(t, evals, 1)
}

// BenchmarkFilterAllocs filters 10,000 allocation rows (as GET
// /v1/allocations?filter= does).
func BenchmarkFilterAllocs(b *testing.B) {
	stubs := make([]*api.AllocListStub, 10000)
	for i := range stubs {
		stubs[i] = api.NewAllocListStub(&messages.Allocation{ID: fmt.Sprintf("a%05d", i), JobID: fmt.Sprintf("job-%d", i%100),
			ClientStatus: "running", TaskGroup: "g", CreateIndex: uint64(i),
			TaskStates: map[string]*messages.TaskState{"t": {State: "running"}}})
	}
	const expr = `JobID == "job-7" and ClientStatus == "running"`
	ev, err := bexpr.CreateEvaluator(expr)
	require.NoError(b, err)
	// json: evaluated against each item's JSON; fast: on the items
	// (filter_fast.go), as the agent does for this expression.
	for name, lq := range map[string]listQuery{"json": {filter: ev}, "fast": {filter: ev, expr: expr}} {
		b.Run(name, func(b *testing.B) {
			r := requestWith(lq)
			for b.Loop() {
				got, err := filtered(r, stubs)
				require.NoError(b, err)
				require.Len(b, got, 100)
			}
		})
	}
}
