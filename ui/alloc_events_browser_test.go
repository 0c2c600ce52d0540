package ui_test

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/troupe-dev/troupe/ui/uitest"
)

// scriptedStream is an event stream that sends the frames the test puts
// in frames, to whichever reader is connected, and counts connections.
type scriptedStream struct {
	frames chan any
	opened atomic.Int32
}

func (s *scriptedStream) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	s.opened.Add(1)
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(http.StatusOK)
	w.(http.Flusher).Flush()
	for {
		select {
		case f := <-s.frames:
			if err := json.NewEncoder(w).Encode(f); err != nil {
				return
			}
			w.(http.Flusher).Flush()
		case <-r.Context().Done():
			return
		}
	}
}

func allocEvent(index int, alloc map[string]any) map[string]any {
	return map[string]any{"Index": index, "Events": []any{map[string]any{
		"Topic": "Allocation", "Type": "AllocationUpdated", "Key": alloc["ID"], "Namespace": "default",
		"FilterKeys": []string{alloc["JobID"].(string)}, "Index": index, "Payload": map[string]any{"Allocation": alloc}}}}
}

// TestJobPageAppliesAllocationEvents: on a job page with 2,000
// allocations, an Allocation event updates its allocation's row in place
// and a new allocation's event inserts its row where it sorts (newest
// first), without the list being read again; only a stream that lost
// events (an error frame) reads the list again.
func TestJobPageAppliesAllocationEvents(t *testing.T) {
	allocs := manyAllocs(2000, "job-0000", "n1")
	var listReads atomic.Int32
	list, err := json.Marshal(allocs)
	require.NoError(t, err)
	stream := &scriptedStream{frames: make(chan any)}
	mux := http.NewServeMux()
	mux.Handle("GET /v1/event/stream", stream)
	mux.Handle("/", fakeAPI(t, map[string]any{
		"/v1/job/job-0000":             map[string]any{"ID": "job-0000", "Type": "service", "Status": "running"},
		"/v1/job/job-0000/versions":    map[string]any{"Versions": []any{}},
		"/v1/job/job-0000/deployments": []any{},
		"/v1/job/job-0000/summary":     map[string]any{"JobID": "job-0000", "Summary": map[string]any{}},
		"/v1/allocations":              pages(t, allocs, allocKey),
		"/v1/job/job-0000/allocations": http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			listReads.Add(1)
			w.Header().Set("X-Nomad-Index", "1")
			_, _ = w.Write(list)
		}),
	}))
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	b := uitest.Start(t)
	b.Open(t, srv.URL+"/ui/jobs/job-0000@default")
	b.WaitComplete(t, 30*time.Second)
	require.Eventually(t, func() bool { return stream.opened.Load() == 1 }, 10*time.Second, 10*time.Millisecond)
	require.Equal(t, int32(1), listReads.Load())
	const rows = `[data-section=allocations] tbody tr`
	row := func(i int) string { return fmt.Sprintf(`document.querySelector('%s[data-row="%d"]')`, rows, i) }

	newest := allocs[len(allocs)-1]
	failed := map[string]any{}
	for k, v := range newest {
		failed[k] = v
	}
	failed["ClientStatus"], failed["DesiredStatus"] = "failed", "stop"
	stream.frames <- allocEvent(2, failed)
	b.WaitFor(t, row(0)+`.querySelector('.badge.s-failed') && `+row(0)+`.textContent.includes('000007cf')`, 10*time.Second)

	fresh := map[string]any{"ID": "fffffff0-0000-4000-8000-000000000000", "Namespace": "default", "JobID": "job-0000",
		"TaskGroup": "g", "NodeID": "n1", "NodeName": "n1", "DesiredStatus": "run", "ClientStatus": "pending", "CreateIndex": 5000}
	stream.frames <- allocEvent(3, fresh)
	b.WaitFor(t, `document.querySelector('[data-section=allocations] [data-count]').textContent === '2001 in all'`, 10*time.Second)
	require.True(t, uitest.Eval[bool](t, b, row(0)+`.textContent.includes('fffffff0') && !!`+row(1)+`.querySelector('.badge.s-failed')`),
		"the new allocation is first, the failed one after it")
	require.Equal(t, int32(1), listReads.Load(), "the events were applied without reading the list again")

	stream.frames <- map[string]any{"Error": "events before index 4 are no longer held"}
	require.Eventually(t, func() bool { return listReads.Load() == 2 }, 10*time.Second, 10*time.Millisecond,
		"a stream that lost events reads the list again")
	b.WaitFor(t, `document.querySelector('[data-section=allocations] [data-count]').textContent === '2000 in all'`, 10*time.Second)
}
