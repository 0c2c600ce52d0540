//go:build linux

package agent

import (
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	nomad "github.com/hashicorp/nomad/api"
	"github.com/stretchr/testify/require"

	"github.com/troupe-dev/troupe/ui/uitest"
)

// TestUIWithACLs: against a real agent with ACLs on, bootstrapped, the
// pages without a token explain the 403 (not a blank page): a job's page
// the refused read, the jobs page why its list (which leaves out what
// the reader may not see, as Nomad's) is empty. A user types the
// management token into the header's field and presses Set token, and
// the jobs page lists the agent's job; after a reload the stored token
// still reads it. A token whose policies do not allow a read gets a 403
// that says so.
func TestUIWithACLs(t *testing.T) {
	cfg := testConfig(t, t.TempDir())
	cfg.ACLEnabled = true
	a := startAgent(t, cfg)
	t.Cleanup(func() { _ = a.Shutdown() })
	c, err := nomad.NewClient(&nomad.Config{Address: "http://" + a.HTTPAddr()})
	require.NoError(t, err)
	boot, _, err := c.ACLTokens().Bootstrap(nil)
	require.NoError(t, err)
	c.SetSecretID(boot.SecretID)
	_, _, err = c.Jobs().Register(rawExecJob("guarded", "sleep 100"), nil)
	require.NoError(t, err)
	base := "http://" + a.HTTPAddr()
	b := uitest.Start(t)

	b.Open(t, base+"/ui/jobs/guarded@default")
	b.WaitReady(t, 20*time.Second)
	b.WaitFor(t, `document.querySelector('[data-section=job] .error')?.textContent.includes('403')`, 10*time.Second)
	b.WaitFor(t, `document.querySelector('[data-section=job] [data-denied]')?.textContent.includes('needs a token')`, 10*time.Second)
	b.Screenshot(t, "job-no-token")

	b.Open(t, base+"/ui/jobs")
	b.WaitReady(t, 20*time.Second)
	b.WaitFor(t, `(t => t.includes('403') && t.includes('no token is set') && t.includes('Set token'))(document.querySelector('#main [data-denied]')?.textContent ?? '')`, 10*time.Second)
	require.Zero(t, uitest.Eval[int](t, b, `document.querySelectorAll('a[href="/ui/jobs/guarded@default"]').length`))
	b.Screenshot(t, "jobs-no-token")

	// As a user does: type the secret ID into the field, press the button.
	b.Do(t, chromedp.SendKeys("#token", boot.SecretID), chromedp.Click("#token-form button"))
	b.WaitFor(t, `document.querySelector('a[href="/ui/jobs/guarded@default"]')`, 10*time.Second)
	require.Zero(t, uitest.Eval[int](t, b, `document.querySelectorAll('#main .error').length`), b.Text(t))
	b.Screenshot(t, "jobs-with-token")

	b.Open(t, base+"/ui/jobs/guarded@default")
	b.WaitFor(t, `document.querySelector('[data-section=job]').innerText.includes('t (raw_exec)')`, 10*time.Second)
	b.Open(t, base+"/ui/jobs")
	b.WaitFor(t, `document.querySelector('a[href="/ui/jobs/guarded@default"]')`, 10*time.Second)

	// A token that may read nodes only is refused a job, and told why.
	_, err = c.ACLPolicies().Upsert(&nomad.ACLPolicy{Name: "nodes", Rules: `node { policy = "read" }`}, nil)
	require.NoError(t, err)
	weak, _, err := c.ACLTokens().Create(&nomad.ACLToken{Name: "nodes", Type: "client", Policies: []string{"nodes"}}, nil)
	require.NoError(t, err)
	require.True(t, uitest.Eval[bool](t, b, `(document.getElementById('token').value = '') === ''`))
	b.Do(t, chromedp.SendKeys("#token", weak.SecretID), chromedp.Click("#token-form button"))
	b.WaitFor(t, `document.querySelector('#main').innerText.includes('No jobs.')`, 10*time.Second)
	require.Zero(t, uitest.Eval[int](t, b, `document.querySelectorAll('#main [data-denied]').length`), "with a token, an empty list is what it may read")
	b.Open(t, base+"/ui/jobs/guarded@default")
	b.WaitFor(t, `document.querySelector('[data-section=job] [data-denied]')?.textContent.includes('may not read this')`, 10*time.Second)
	b.Screenshot(t, "job-weak-token")
}
