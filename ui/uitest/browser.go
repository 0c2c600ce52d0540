package uitest

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
)

// Browser is one headless Chromium with one tab, ended with its test.
type Browser struct {
	ctx context.Context
}

// chromiumNames are the binaries tried, in order.
var chromiumNames = []string{"chromium", "chromium-browser", "google-chrome"}

// Start starts a headless Chromium with a fresh profile for t (skipping
// t when none is installed); it is closed when t ends.
func Start(t testing.TB) *Browser {
	t.Helper()
	bin := ""
	for _, n := range chromiumNames {
		if p, err := exec.LookPath(n); err == nil {
			bin = p
			break
		}
	}
	if bin == "" {
		t.Skip("uitest: no chromium binary on PATH (scripts/setup.sh installs Debian's chromium)")
	}
	opts := []chromedp.ExecAllocatorOption{
		chromedp.ExecPath(bin),
		chromedp.Headless,
		chromedp.NoSandbox,
		chromedp.DisableGPU,
		chromedp.NoFirstRun,
		chromedp.NoDefaultBrowserCheck,
		chromedp.Flag("disable-quic", true),
		chromedp.Flag("disable-background-networking", true),
		chromedp.Flag("disable-component-update", true),
		chromedp.Flag("disable-sync", true),
		chromedp.UserDataDir(t.TempDir()),
		chromedp.WindowSize(1280, 900),
	}
	actx, cancelAlloc := chromedp.NewExecAllocator(context.Background(), opts...)
	ctx, cancel := chromedp.NewContext(actx, chromedp.WithLogf(t.Logf))
	t.Cleanup(func() { cancel(); cancelAlloc() })
	if err := chromedp.Do(ctx); err != nil {
		t.Fatalf("uitest: starting %s: %v", bin, err)
	}
	return &Browser{ctx: ctx}
}

// Context is the tab's context, for chromedp actions of a test's own.
func (b *Browser) Context() context.Context { return b.ctx }

// Do runs chromedp actions on the tab, failing t on an error.
func (b *Browser) Do(t testing.TB, actions ...chromedp.Action[chromedp.Void]) {
	t.Helper()
	ctx, cancel := context.WithTimeout(b.ctx, time.Minute)
	defer cancel()
	if err := chromedp.Do(ctx, actions...); err != nil {
		t.Fatalf("uitest: %v", err)
	}
}

// run runs one action that returns a value, failing t on an error.
func run[T any](t testing.TB, b *Browser, a chromedp.Action[T]) T {
	t.Helper()
	ctx, cancel := context.WithTimeout(b.ctx, time.Minute)
	defer cancel()
	v, err := chromedp.Run(ctx, a)
	if err != nil {
		t.Fatalf("uitest: %v", err)
	}
	return v
}

// Open loads a UI page in the tab and waits until the UI's modules have
// loaded and started (the app marks <body data-app="1">). A load that
// Chromium aborts, or whose modules it fails to fetch, because the host's
// network changed (tests elsewhere on the machine add and remove
// interfaces: net::ERR_NETWORK_CHANGED) is tried again, for a minute.
func (b *Browser) Open(t testing.TB, url string) {
	t.Helper()
	deadline := time.Now().Add(time.Minute)
	for {
		err := b.load(url)
		if err == nil {
			return
		}
		if time.Now().After(deadline) || !strings.Contains(err.Error(), "ERR_NETWORK_CHANGED") && !errors.Is(err, errNotStarted) {
			t.Fatalf("uitest: opening %s: %v", url, err)
		}
		t.Logf("uitest: opening %s: %v; trying again", url, err)
	}
}

var errNotStarted = errors.New("uitest: the UI did not start (a module failed to load)")

func (b *Browser) load(url string) error {
	ctx, cancel := context.WithTimeout(b.ctx, time.Minute)
	defer cancel()
	if err := chromedp.Do(ctx, chromedp.Navigate(url)); err != nil {
		return err
	}
	started, err := chromedp.Run(ctx, chromedp.Poll[bool](`document.body?.dataset.app === '1'`,
		chromedp.WithPollingTimeout(5*time.Second), chromedp.WithPollingInterval(20*time.Millisecond)))
	if err != nil || !started {
		return fmt.Errorf("%w: %v", errNotStarted, err)
	}
	return nil
}

// WaitFor polls the JavaScript expression expr in the page until it is
// truthy or timeout passes (failing t, with the page's text); an
// expression that throws (an element not there yet) counts as false.
func (b *Browser) WaitFor(t testing.TB, expr string, timeout time.Duration) {
	t.Helper()
	ctx, cancel := context.WithTimeout(b.ctx, timeout+5*time.Second)
	defer cancel()
	ok, err := chromedp.Run(ctx, chromedp.Poll[bool]("(() => { try { return !!("+expr+") } catch (e) { return false } })()", chromedp.WithPollingTimeout(timeout), chromedp.WithPollingInterval(20*time.Millisecond)))
	if err != nil || !ok {
		t.Fatalf("uitest: %s did not hold within %v (%v); page text:\n%s", expr, timeout, err, b.Text(t))
	}
}

// WaitReady waits until the page has drawn its data for the first time
// (the router's ready mark).
func (b *Browser) WaitReady(t testing.TB, timeout time.Duration) {
	t.Helper()
	b.WaitFor(t, `document.body.dataset.ready === '1'`, timeout)
}

// WaitComplete waits until the page has drawn all of its data (the
// router's complete mark: also the long lists it drew a part of first).
func (b *Browser) WaitComplete(t testing.TB, timeout time.Duration) {
	t.Helper()
	b.WaitFor(t, `document.body.dataset.complete === '1'`, timeout)
}

// Eval evaluates expr in the page.
func Eval[T any](t testing.TB, b *Browser, expr string) T {
	t.Helper()
	return run(t, b, chromedp.Evaluate[T](expr))
}

// Click clicks the element that selector names (failing t if none).
func (b *Browser) Click(t testing.TB, selector string) {
	t.Helper()
	q := strconv.Quote(selector)
	if !Eval[bool](t, b, `(el => { if (!el) return false; el.click(); return true })(document.querySelector(`+q+`))`) {
		t.Fatalf("uitest: nothing to click at %s; page text:\n%s", selector, b.Text(t))
	}
}

// Text is the text of the page's main element.
func (b *Browser) Text(t testing.TB) string {
	ctx, cancel := context.WithTimeout(b.ctx, 10*time.Second)
	defer cancel()
	s, err := chromedp.Run(ctx, chromedp.Evaluate[string](`document.getElementById('main')?.innerText ?? document.body.innerText`))
	if err != nil {
		return "(page text unavailable: " + err.Error() + ")"
	}
	return s
}

// Timings break a page load down, in milliseconds from the start of
// navigation (the Performance API): the document parsed
// (DOMContentLoaded, after its modules ran), the last /v1/ answer fully
// read, the page's data drawn (ready: the rows in view of a long list)
// and all of it drawn (complete; each -1 when not yet). Requests
// counts the requests that went to the network, the document's
// included (what the browser's cache answered is not counted), and
// TransferKB what they carried; Assets and AssetKB are those for the
// UI's own files (not /v1/).
type Timings struct {
	DOMContentLoaded, LastAPIResponse, Ready, Complete float64
	Requests, Assets                                   int
	TransferKB, AssetKB                                float64
}

// PageTimings reads the Timings of the page now shown.
func (b *Browser) PageTimings(t testing.TB) Timings {
	t.Helper()
	return Eval[Timings](t, b, `({
  DOMContentLoaded: performance.getEntriesByType('navigation')[0]?.domContentLoadedEventEnd ?? -1,
  LastAPIResponse: Math.max(-1, ...performance.getEntriesByType('resource')
    .filter((e) => new URL(e.name).pathname.startsWith('/v1/')).map((e) => e.responseEnd)),
  Ready: performance.getEntriesByName('troupe:ready').at(-1)?.startTime ?? -1,
  Complete: performance.getEntriesByName('troupe:complete').at(-1)?.startTime ?? -1,
  ...(() => {
    const nav = performance.getEntriesByType('navigation')[0];
    const res = performance.getEntriesByType('resource').filter((e) => e.transferSize > 0);
    const ui = res.filter((e) => !new URL(e.name).pathname.startsWith('/v1/'));
    const kb = (es) => es.reduce((n, e) => n + e.transferSize, 0) / 1024;
    return { Requests: res.length + (nav?.transferSize > 0 ? 1 : 0), TransferKB: kb(res) + (nav?.transferSize || 0) / 1024,
      Assets: ui.length, AssetKB: kb(ui) };
  })(),
})`)
}

// Screenshot writes a full-page PNG of the tab as name.png under the
// artifact folder, and logs where.
func (b *Browser) Screenshot(t testing.TB, name string) {
	t.Helper()
	png := run(t, b, chromedp.FullScreenshot(100))
	path := filepath.Join(ArtifactDir(t), name+".png")
	if err := os.WriteFile(path, png, 0o644); err != nil {
		t.Fatalf("uitest: writing screenshot: %v", err)
	}
	t.Logf("uitest: screenshot %s", path)
}

var (
	dirsMu sync.Mutex
	dirs   = map[testing.TB]string{}
	unsafe = regexp.MustCompile(`[^A-Za-z0-9_.-]+`)
)

// ArtifactDir is where t's artifacts go: $TROUPE_TEST_ARTIFACTS/<test
// name> when that is set, else a t.TempDir().
func ArtifactDir(t testing.TB) string {
	t.Helper()
	dirsMu.Lock()
	defer dirsMu.Unlock()
	if d, ok := dirs[t]; ok {
		return d
	}
	d := t.TempDir()
	if root := os.Getenv("TROUPE_TEST_ARTIFACTS"); root != "" {
		d = filepath.Join(root, unsafe.ReplaceAllString(t.Name(), "_"))
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatalf("uitest: artifact folder: %v", err)
		}
	}
	dirs[t] = d
	t.Logf("uitest: artifacts in %s", d)
	return d
}

// Read is how one /v1 read of a page went, in milliseconds from the
// start of navigation (the Performance API): the request sent, its first
// byte and its last byte arrived, its JSON parsed (the UI's mark
// "troupe:parsed <path>") and its section drawn ("troupe:drawn <path>");
// -1 for a step not reached. KB is what it carried.
type Read struct {
	Path                                     string
	Sent, FirstByte, LastByte, Parsed, Drawn float64
	KB                                       float64
}

// Breakdown reads the first read of each /v1 path of the page now shown
// (not the event stream, which stays open), in the order they were sent.
func (b *Browser) Breakdown(t testing.TB) []Read {
	t.Helper()
	return Eval[[]Read](t, b, `(() => {
  const mark = (kind, path) => performance.getEntriesByName('troupe:' + kind + ' ' + path)[0]?.startTime ?? -1;
  const seen = new Set();
  return performance.getEntriesByType('resource').filter((e) => {
    const u = new URL(e.name);
    if (!u.pathname.startsWith('/v1/') || u.pathname === '/v1/event/stream' || seen.has(u.pathname)) return false;
    seen.add(u.pathname);
    return true;
  }).map((e) => {
    const path = new URL(e.name).pathname;
    return { Path: path, Sent: e.requestStart || e.startTime, FirstByte: e.responseStart, LastByte: e.responseEnd,
      Parsed: mark('parsed', path), Drawn: mark('drawn', path), KB: e.transferSize / 1024 };
  });
})()`)
}
