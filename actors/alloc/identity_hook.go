package alloc

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"sync/atomic"
	"time"

	"github.com/troupe-dev/troupe/actors"
	"github.com/troupe-dev/troupe/messages"
	"github.com/troupe-dev/troupe/runtime/clientstate"
	"github.com/troupe-dev/troupe/runtime/safepath"
)

// IdentitySource asks the servers for the workload identities of an
// allocation of this client, and reads variables for a template with its
// task's identity (the agent's server connection; any server answers).
type IdentitySource interface {
	SignIdentities(ctx context.Context, allocID string) ([]*messages.SignedIdentity, error)
	ReadVarsAs(ctx context.Context, token string, req *messages.VarReadRequest) (*messages.VarReadResponse, error)
}

// Where a task finds its identities, as in Nomad: the default one in
// NOMAD_TOKEN (env = true) and secrets/nomad_token (file = true), a named
// one in NOMAD_TOKEN_<name> and secrets/nomad_<name>.jwt.
const (
	envIdentity        = "NOMAD_TOKEN"
	fileIdentity       = "nomad_token"
	defaultIdentity    = "default"
	identityFilePerm   = 0o600
	identityNamedFile  = "nomad_%s.jwt"
	identityNamedEnvPf = "NOMAD_TOKEN_"
)

// identityHook fetches the signed identities of the allocation's tasks
// before they start (after the alloc dir, before the templates, which
// read with them), writes those asked for as files into the tasks'
// secrets dirs, and keeps them for the tasks' env and their templates.
// The tokens are set by Prerun (in a worker) and by a renewal, and read
// on the actor and by the templates' workers.
type identityHook struct {
	a      *Actor
	tokens atomic.Pointer[identityTokens]
	// renewal of the identities with a ttl (identity_renew.go), on the
	// actor.
	renew renewal
	// restored: tasks ran on when the actor started (Restore).
	restored bool
}

// identityTokens are the signed identities: task -> identity name -> JWT.
type identityTokens map[string]map[string]string

func (h *identityHook) Name() string { return "identity" }

// defaultIdentityRetry is the backoff between tries to get the
// identities signed: 1 s doubling to 30 s, for 10 min.
func defaultIdentityRetry() actors.Retry {
	return actors.Retry{Initial: time.Second, Max: 30 * time.Second, Multiplier: 2, Deadline: 10 * time.Minute}
}

// prerunRetry: a server that could not sign (unreachable, no leader yet)
// is asked again; one that refuses (the allocation is not this node's,
// or terminal) is not.
func (h *identityHook) prerunRetry() *hookRetry {
	return &hookRetry{Policy: h.a.spec.IdentityRetry.Or(defaultIdentityRetry()), Retryable: func(err error) bool {
		var coded interface{ ErrorCode() messages.ErrorCode }
		if errors.As(err, &coded) {
			switch coded.ErrorCode() {
			case messages.CodeNotFound, messages.CodeInvalid, messages.CodePermissionDenied:
				return false
			}
		}
		return true
	}}
}

// Restore notes whether tasks run on (an agent restart): their setup
// does not fail for want of identities.
func (h *identityHook) Restore(stored *clientstate.StoredAlloc) {
	for _, st := range stored.TaskStates {
		if st.GetState() == taskRunning {
			h.restored = true
		}
	}
}

// Prerun asks a server for the identities, when a task asks for its
// identity or renders templates (which read with it). A failure fails the
// setup (after the retries of prerunRetry), unless tasks run on from
// before an agent restart: it is logged, and they go on.
func (h *identityHook) Prerun(ctx context.Context, al *messages.Allocation) error {
	src := h.a.spec.Identities
	if src == nil || !needsIdentity(al) {
		return nil
	}
	signed, err := src.SignIdentities(ctx, al.GetID())
	if err != nil {
		if !h.restored {
			return err
		}
		h.a.log.Warn("no workload identities for tasks that run on", "error", err)
		return nil
	}
	tokens, err := h.write(al, signed)
	if err != nil {
		return err
	}
	h.tokens.Store(&tokens)
	return nil
}

// write writes the files of the signed identities and returns them by
// task and name.
func (h *identityHook) write(al *messages.Allocation, signed []*messages.SignedIdentity) (identityTokens, error) {
	tokens := identityTokens{}
	for _, s := range signed {
		if tokens[s.GetTask()] == nil {
			tokens[s.GetTask()] = map[string]string{}
		}
		tokens[s.GetTask()][s.GetName()] = s.GetJWT()
	}
	for _, t := range groupOf(al).GetTasks() {
		if err := writeIdentityFiles(TaskDir(h.a.spec.AllocRoot, al.GetID(), t.GetName()), t, tokens[t.GetName()]); err != nil {
			return nil, fmt.Errorf("task %s: %w", t.GetName(), err)
		}
	}
	return tokens, nil
}

// get is the JWT of identity name of task ("": none).
func (h *identityHook) get(task, name string) (string, bool) {
	p := h.tokens.Load()
	if p == nil {
		return "", false
	}
	jwt, ok := (*p)[task][name]
	return jwt, ok
}

// needsIdentity reports whether a task of al uses its identity.
func needsIdentity(al *messages.Allocation) bool {
	for _, t := range groupOf(al).GetTasks() {
		if t.GetIdentity() != nil || len(t.GetIdentities()) > 0 || len(t.GetTemplates()) > 0 {
			return true
		}
	}
	return false
}

// writeIdentityFiles writes the identities of t with file = true.
func writeIdentityFiles(taskDir string, t *messages.Task, tokens map[string]string) error {
	for _, id := range identitiesOf(t) {
		if !id.GetFile() {
			continue
		}
		name, file := identityNames(id)
		jwt, ok := tokens[name]
		if !ok {
			return fmt.Errorf("no signed identity %q", name)
		}
		dest := filepath.Join(taskDir, secretsDirName, file)
		if err := safepath.WriteFileAtomic(taskDir, dest, []byte(jwt), identityFilePerm); err != nil {
			return fmt.Errorf("identity %q: %w", name, err)
		}
	}
	return nil
}

// identitiesOf is t's identity blocks: the default one first (when set).
func identitiesOf(t *messages.Task) []*messages.TaskIdentity {
	var out []*messages.TaskIdentity
	if t.GetIdentity() != nil {
		out = append(out, t.GetIdentity())
	}
	return append(out, t.GetIdentities()...)
}

// identityNames are an identity block's name and file name.
func identityNames(id *messages.TaskIdentity) (name, file string) {
	name = id.GetName()
	if name == "" || name == defaultIdentity {
		return defaultIdentity, fileIdentity
	}
	return name, fmt.Sprintf(identityNamedFile, name)
}

// token is task's default identity ("" when it has none).
func (h *identityHook) token(task string) string {
	jwt, _ := h.get(task, defaultIdentity)
	return jwt
}

// withEnv adds to env the identities of t with env = true.
func (h *identityHook) withEnv(t *messages.Task, env map[string]string) {
	for _, id := range identitiesOf(t) {
		if !id.GetEnv() {
			continue
		}
		name, _ := identityNames(id)
		jwt, ok := h.get(t.GetName(), name)
		if !ok {
			continue
		}
		key := envIdentity
		if name != defaultIdentity {
			key = identityNamedEnvPf + name
		}
		env[key] = jwt
	}
}
