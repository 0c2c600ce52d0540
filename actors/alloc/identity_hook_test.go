package alloc

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

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
}

var _ IdentitySource = (*fakeIdentities)(nil)

func (f *fakeIdentities) SignIdentities(_ context.Context, _ string) ([]*messages.SignedIdentity, error) {
	return []*messages.SignedIdentity{{Task: "t", Name: "default", JWT: "jwt-t-default"},
		{Task: "t", Name: "vault", JWT: "jwt-t-vault"}}, nil
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

// TestIdentityHook: the task gets its default identity in NOMAD_TOKEN and
// secrets/nomad_token, a named one in secrets/nomad_<name>.jwt, and its
// template reads with its default identity.
func TestIdentityHook(t *testing.T) {
	h := newHarness(t)
	vars := newFakeVars()
	vars.set("nomad/jobs/web", map[string]string{"k": "v"})
	ids := &fakeIdentities{vars: vars, allowed: "nomad/jobs/web"}
	h.vars, h.idents = vars, ids
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
