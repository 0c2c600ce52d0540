package nvidia

import (
	"bytes"
	"log/slog"
	"strings"
	"sync"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/troupe-dev/troupe/runtime/device/nvidia/nvmltest"
)

func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m)
}

// logBuffer collects log lines for assertions and echoes them to the test.
type logBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *logBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

// count is how many log lines contain s.
func (b *logBuffer) count(s string) int {
	b.mu.Lock()
	defer b.mu.Unlock()
	return strings.Count(b.buf.String(), s)
}

func (b *logBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

// newPlugin returns a plugin over cfg.NVML (nil: the host's NVML) and its log.
func newPlugin(t *testing.T, cfg Config) (*Plugin, *logBuffer) {
	t.Helper()
	logs := &logBuffer{}
	cfg.Logger = slog.New(slog.NewTextHandler(logs, &slog.HandlerOptions{Level: slog.LevelDebug}))
	if cfg.EventTimeout == 0 {
		cfg.EventTimeout = 5 * time.Millisecond
	}
	p := New(cfg)
	t.Cleanup(func() {
		_ = p.Close()
		t.Log("plugin log:\n" + logs.String())
	})
	return p, logs
}

func newMock() *nvmltest.Server { return nvmltest.NewDGXH100() }

// mockPlugin is a plugin over the DGX H100 mock whose Root is "/": device
// nodes at their real paths, and the host's driver files, if any.
func mockPlugin(t *testing.T) (*Plugin, *nvmltest.Server, *logBuffer) {
	s := newMock()
	p, logs := newPlugin(t, Config{NVML: s})
	return p, s, logs
}
