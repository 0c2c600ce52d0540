package httpapi

import (
	"bytes"
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// readerWriter is a ResponseWriter whose body the test reads as a
// client would: each Write waits until the test takes it (a reader that
// stops taking stalls the handler in Write, as a full socket does).
type readerWriter struct {
	header  http.Header
	writes  chan []byte
	waiting atomic.Int32 // Writes waiting for the reader
}

func newReaderWriter() *readerWriter {
	return &readerWriter{header: http.Header{}, writes: make(chan []byte)}
}

func (w *readerWriter) Header() http.Header { return w.header }
func (w *readerWriter) WriteHeader(int)     {}
func (w *readerWriter) Flush()              {}

func (w *readerWriter) Write(p []byte) (int, error) {
	w.waiting.Add(1)
	defer w.waiting.Add(-1)
	w.writes <- bytes.Clone(p)
	return len(p), nil
}

// line takes the handler's writes up to the end of the next line.
func (w *readerWriter) line(t *testing.T) string {
	t.Helper()
	var b strings.Builder
	for !strings.HasSuffix(b.String(), "\n") {
		select {
		case p := <-w.writes:
			b.Write(p)
		case <-time.After(5 * time.Second):
			t.Fatalf("no line within 5s (so far %q)", b.String())
		}
	}
	return b.String()
}

// TestEventStreamSlowReaderEnded: a client streaming events stops
// reading while the handler writes (it waits in Write); applies go on
// without waiting for it and overwrite what the handler has not read;
// once the client reads again it gets the frame it was sent, then an
// error frame naming the first index lost, and the stream ends.
func TestEventStreamSlowReaderEnded(t *testing.T) {
	b := newFSMBackend()
	b.Store().SetEventBufferSize(4)
	s := New(b, nil, Options{EventHeartbeat: time.Hour})
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	w := newReaderWriter()
	req := httptest.NewRequest(http.MethodGet, "/v1/event/stream?topic=Job", nil).WithContext(ctx)
	done := make(chan struct{})
	go func() { defer close(done); s.ServeHTTP(w, req) }()

	registerEventJob(t, b, "j0")
	require.Contains(t, w.line(t), `"Key":"j0"`, "the client streams")
	registerEventJob(t, b, "j1")
	require.Eventually(t, func() bool { return w.waiting.Load() > 0 }, 5*time.Second, time.Millisecond,
		"the handler waits on the client, writing j1")
	applied := make(chan struct{})
	go func() {
		defer close(applied)
		for i := range 10 {
			registerEventJob(t, b, fmt.Sprintf("j%d", i+2))
		}
	}()
	select {
	case <-applied:
	case <-time.After(5 * time.Second):
		t.Fatal("applies waited for the stalled reader")
	}
	require.Contains(t, w.line(t), `"Key":"j1"`, "what was written before it fell behind")
	require.Contains(t, w.line(t), `{"Error":"state: events lost: events from index 3 are no longer held (oldest held: 9)"}`)
	select {
	case <-done:
	case <-time.After(5 * time.Second):
		t.Fatal("the stream did not end after its error")
	}
}
