// Package uitest drives Debian's headless Chromium from Go tests
// (chromedp) against the web UI: Start a browser for a test, open a page,
// wait for the DOM to show something (polled with a deadline, never a
// sleep), and write screenshots under the test's artifact folder
// ($TROUPE_TEST_ARTIFACTS, else a t.TempDir()). A test skips, saying so,
// where no chromium binary is installed (scripts/setup.sh installs it).
//
//	b := uitest.Start(t)
//	b.Open(t, base+"/ui/jobs")
//	b.WaitFor(t, `document.querySelector('a[href="/ui/jobs/web@default"]')`, 10*time.Second)
//	b.Screenshot(t, "jobs")
package uitest
