package syncbuf

import (
	"strings"
	"sync"
	"testing"
)

// TestBufferWritesWhileRead: writers on several goroutines and a reader
// at once (-race checks the lock); every byte written is there at the end.
func TestBufferWritesWhileRead(t *testing.T) {
	var b Buffer
	var wg sync.WaitGroup
	for range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for range 100 {
				_, _ = b.Write([]byte("x"))
			}
		}()
	}
	for range 50 {
		_ = b.String()
	}
	wg.Wait()
	if got := b.String(); got != strings.Repeat("x", 400) {
		t.Fatalf("got %d bytes, want 400", len(got))
	}
}
