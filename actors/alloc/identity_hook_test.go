package alloc

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/troupe-dev/troupe/messages"
)

// fakeIdentities signs "jwt-<task>-<name>" for every identity of the
// allocation's tasks and answers reads made with a token over vars,
// refusing every path but allowed (permission_denied).
type fakeIdentities struct {
	vars    *fakeVars
	allowed string
	mu      sync.Mutex
	tokens  []string // the tokens reads were made with
	signs   int      // SignIdentities calls; from the second on, JWTs end in -<n>
	// failures are the errors of the first calls.
	failures []error
}

// codedErr is a server's refusal with a code, as the transport returns it.
type codedErr struct{ code messages.ErrorCode }

func (e codedErr) Error() string                 { return "refused: " + string(e.code) }
func (e codedErr) ErrorCode() messages.ErrorCode { return e.code }

var _ IdentitySource = (*fakeIdentities)(nil)

func (f *fakeIdentities) SignIdentities(_ context.Context, _ string) ([]*messages.SignedIdentity, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if len(f.failures) > 0 {
		err := f.failures[0]
		f.failures = f.failures[1:]
		return nil, err
	}
	f.signs++
	suffix := ""
	if f.signs > 1 {
		suffix = fmt.Sprintf("-%d", f.signs)
	}
	return []*messages.SignedIdentity{{Task: "t", Name: "default", JWT: "jwt-t-default" + suffix},
		{Task: "t", Name: "vault", JWT: "jwt-t-vault" + suffix}}, nil
}

func (f *fakeIdentities) ReadVarsAs(ctx context.Context, token string, req *messages.VarReadRequest) (*messages.VarReadResponse, error) {
	f.mu.Lock()
	f.tokens = append(f.tokens, token)
	f.mu.Unlock()
	if req.GetPath() != "" && req.GetPath() != f.allowed {
		return &messages.VarReadResponse{Error: messages.NewError(messages.CodePermissionDenied, "Permission denied: "+req.GetPath())}, nil
	}
	return f.vars.ReadVars(ctx, req)
}

func (f *fakeIdentities) used() []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]string(nil), f.tokens...)
}

func identityAlloc(tmpl string) *messages.Allocation {
	a := testAlloc("service", map[string]any{}, nil)
	t := a.Job.TaskGroups[0].Tasks[0]
	t.Identity = &messages.TaskIdentity{Env: true, File: true}
	t.Identities = []*messages.TaskIdentity{{Name: "vault", File: true}, {Name: "consul", Env: true}}
	t.Templates = []*messages.TaskTemplate{{EmbeddedTmpl: tmpl, DestPath: "local/x.conf"}}
	return a
}

// identityHarness has nomad/jobs/web = {k: v} in its variables, which
// its identities may read.
func identityHarness(t *testing.T) (*harness, *fakeVars, *fakeIdentities) {
	h := newHarness(t)
	vars := newFakeVars()
	vars.set("nomad/jobs/web", map[string]string{"k": "v"})
	ids := &fakeIdentities{vars: vars, allowed: "nomad/jobs/web"}
	h.vars, h.idents = vars, ids
	return h, vars, ids
}

// TestIdentityHook: the task gets its default identity in NOMAD_TOKEN and
// secrets/nomad_token, a named one in secrets/nomad_<name>.jwt, and its
// template reads with its default identity.
func TestIdentityHook(t *testing.T) {
	h, _, ids := identityHarness(t)
	a := identityAlloc(`k={{ with nomadVar "nomad/jobs/web" }}{{ .k }}{{ end }}`)
	h.spawn(a)
	h.waitFor("running", status(statusRunning))

	cfg, ok := h.fake.Task(taskID)
	require.True(t, ok)
	require.Equal(t, "jwt-t-default", cfg.Env["NOMAD_TOKEN"])
	require.NotContains(t, cfg.Env, "NOMAD_TOKEN_vault", "vault's identity is a file only")
	require.NotContains(t, cfg.Env, "NOMAD_TOKEN_consul", "consul's was not signed")
	secrets := filepath.Join(h.root, a.ID, "t", "secrets")
	b, err := os.ReadFile(filepath.Join(secrets, "nomad_token"))
	require.NoError(t, err)
	require.Equal(t, "jwt-t-default", string(b))
	b, err = os.ReadFile(filepath.Join(secrets, "nomad_vault.jwt"))
	require.NoError(t, err)
	require.Equal(t, "jwt-t-vault", string(b))
	b, err = os.ReadFile(filepath.Join(h.root, a.ID, "t", "local", "x.conf"))
	require.NoError(t, err)
	require.Equal(t, "k=v", string(b))
	require.Contains(t, ids.used(), "jwt-t-default", "the template read with the task's identity")

	h.clock.Advance(48 * time.Hour) // no ttl: no renewal
	require.Never(t, func() bool { ids.mu.Lock(); defer ids.mu.Unlock(); return ids.signs > 1 }, 100*time.Millisecond, 5*time.Millisecond)
}

// TestIdentityTemplateRefused: a template whose read is refused to the
// task's identity holds the task pending, with an event that says why,
// and never starts it.
func TestIdentityTemplateRefused(t *testing.T) {
	h := newHarness(t)
	vars := newFakeVars()
	vars.set("nomad/jobs/other", map[string]string{"k": "theirs"})
	h.vars, h.idents = vars, &fakeIdentities{vars: vars, allowed: "nomad/jobs/web"}
	h.spawn(identityAlloc(`k={{ with nomadVar "nomad/jobs/other" }}{{ .k }}{{ end }}`))
	al := h.waitFor("blocked event", func(al *messages.Allocation) bool {
		for _, ev := range al.GetTaskStates()["t"].GetEvents() {
			if ev.GetType() == eventHookMessage && strings.Contains(ev.GetMessage(), "Permission denied") {
				return true
			}
		}
		return false
	})
	require.Equal(t, taskPending, al.GetTaskStates()["t"].GetState())
	require.Equal(t, 0, len(h.fake.TaskIDs()), "the task never started")
}

// TestIdentityRenewal: identities with a ttl are signed again at half the
// ttl (on the injected clock), their files rewritten, and the templates
// read with the new token; without a ttl nothing is renewed.
func TestIdentityRenewal(t *testing.T) {
	h, vars, ids := identityHarness(t)
	a := identityAlloc(`k={{ with nomadVar "nomad/jobs/web" }}{{ .k }}{{ end }}`)
	a.Job.TaskGroups[0].Tasks[0].Identities[0].TTL = int64(time.Hour)
	h.spawn(a)
	h.waitFor("running", status(statusRunning))
	file := filepath.Join(h.root, a.ID, "t", "secrets", "nomad_token")
	read := func() string { b, _ := os.ReadFile(file); return string(b) }
	require.Equal(t, "jwt-t-default", read())

	h.clock.Advance(29 * time.Minute)
	require.Never(t, func() bool { return read() != "jwt-t-default" }, 100*time.Millisecond, 5*time.Millisecond)
	h.clock.Advance(2 * time.Minute)
	require.Eventually(t, func() bool { return read() == "jwt-t-default-2" }, 5*time.Second, time.Millisecond)
	require.Eventually(t, func() bool {
		vault, _ := os.ReadFile(filepath.Join(h.root, a.ID, "t", "secrets", "nomad_vault.jwt"))
		return string(vault) == "jwt-t-vault-2"
	}, 5*time.Second, time.Millisecond)
	require.Eventually(t, func() bool {
		h.clock.Advance(time.Minute) // the next renewal is 30 min after this one
		return read() == "jwt-t-default-3"
	}, 5*time.Second, time.Millisecond)

	// The watch reads with the new token (once the actor has it: the
	// file is written just before).
	n := 0
	require.Eventually(t, func() bool {
		n++
		vars.set("nomad/jobs/web", map[string]string{"k": fmt.Sprint(n)})
		return slices.Contains(ids.used(), "jwt-t-default-3")
	}, 5*time.Second, 50*time.Millisecond)
}

// TestIdentitySignRetried: a server that could not sign is asked again
// (with backoff on the injected clock) and the allocation runs; one that
// refuses fails the allocation at once.
func TestIdentitySignRetried(t *testing.T) {
	h := newHarness(t)
	vars := newFakeVars()
	ids := &fakeIdentities{vars: vars, failures: []error{errors.New("no leader"), errors.New("unreachable")}}
	h.vars, h.idents = vars, ids
	h.spawn(identityAlloc(`x`))
	require.Eventually(t, func() bool {
		h.clock.Advance(time.Second)
		ids.mu.Lock()
		defer ids.mu.Unlock()
		return ids.signs == 1
	}, 5*time.Second, time.Millisecond)
	h.waitFor("running", status(statusRunning))

	h2 := newHarness(t)
	h2.vars, h2.idents = vars, &fakeIdentities{vars: vars, failures: []error{codedErr{messages.CodeInvalid}}}
	h2.spawn(identityAlloc(`x`))
	al := h2.waitFor("failed", status(statusFailed))
	require.Contains(t, al.GetTaskStates()["t"].GetEvents()[len(al.GetTaskStates()["t"].GetEvents())-1].GetMessage(), "refused")
}
