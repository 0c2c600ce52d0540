package alloc

import (
	"context"
	"crypto/sha256"
	"errors"
	"fmt"
	"io"
	"maps"
	"os"
	"path/filepath"
	"strconv"
	"time"

	"github.com/troupe-dev/troupe/messages"
	"github.com/troupe-dev/troupe/runtime/clientstate"
	"github.com/troupe-dev/troupe/runtime/safepath"
	rtemplate "github.com/troupe-dev/troupe/runtime/template"
)

// VarSource reads variables from the servers for templates (the agent's
// server connection; any server answers).
type VarSource interface {
	ReadVars(ctx context.Context, req *messages.VarReadRequest) (*messages.VarReadResponse, error)
}

// varWait is how long one blocking read of the variables table waits at
// a server before it answers anyway (the transport bounds a request at
// 10 s); the watch asks again at once.
const varWait = 5 * time.Second

// templateHook owns the templates of the allocation's tasks (Nomad's
// template block). Each task renders its own at every start, after its
// artifacts (template_task.go), and tells the hook what it rendered. Once
// the tasks run, the hook watches the variables and services tables
// (watchTemplates) and renders again on every change: a template whose
// output changed is written again and its change_mode applied
// (template_watch.go). After an agent restart, Prerun renders the
// templates of the tasks that run on: one whose output is not the file's
// (a variable changed while the agent was down) is written, and its
// change_mode applied once the task is re-attached.
type templateHook struct {
	a *Actor
	// Set by Prerun (in a worker, read on the actor after the phase
	// ends, as the mailbox orders them), then by the tasks' renders and
	// the watch's results.
	env   map[string]map[string]string // a worker's scratch: task -> env from env templates
	sums  map[tmplKey][32]byte
	index uint64 // the variables table's index the files were rendered at
	// restored: the tasks restored running (Restore); pending: their
	// templates Prerun wrote anew, whose change modes wait for the task to
	// be re-attached.
	restored map[string]bool
	pending  map[string][]tmplKey
	// watching: a watch worker runs (stop ends it); gen tells its result
	// from an old one.
	watching bool
	stop     chan struct{}
	gen      int
	// blocked, in a start's render (renderStep), tells the task actor
	// once that a read was refused.
	blocked func(error)
}

// tmplKey names one template: its task and its place in the task.
type tmplKey struct {
	task string
	i    int
}

func (h *templateHook) Name() string { return "template" }

// Restore notes the tasks that run on after an agent restart.
func (h *templateHook) Restore(stored *clientstate.StoredAlloc) {
	h.restored = map[string]bool{}
	for task, st := range stored.TaskStates {
		if st.GetState() == taskRunning {
			h.restored[task] = true
		}
	}
}

// Prerun renders the templates of the tasks restored running (the others
// render at their start): a template whose output is not its file's is
// written, and waits in pending for its change mode. A render that fails
// keeps the file, as the watch does.
func (h *templateHook) Prerun(ctx context.Context, al *messages.Allocation) error {
	h.sums, h.pending = map[tmplKey][32]byte{}, map[string][]tmplKey{}
	h.env = map[string]map[string]string{}
	var tasks []*messages.Task
	for _, t := range groupOf(al).GetTasks() {
		if h.restored[t.GetName()] && len(t.GetTemplates()) > 0 {
			tasks = append(tasks, t)
		}
	}
	if len(tasks) == 0 {
		return nil
	}
	index, err := h.currentIndex(ctx, al)
	if err != nil {
		return err
	}
	for _, t := range tasks {
		for i, tt := range t.GetTemplates() {
			if tt.GetOnce() {
				continue // rendered once, at the task's first start
			}
			out, err := h.render(ctx, al, t, i)
			if err != nil {
				h.a.log.Warn("template render failed on restore; its file is kept", "task", t.GetName(), "template", i, "error", err)
				continue
			}
			k := tmplKey{t.GetName(), i}
			sum := sha256.Sum256(out)
			if old, err := readDest(TaskDir(h.a.spec.AllocRoot, al.GetID(), t.GetName()), tt); err == nil && sha256.Sum256(old) == sum {
				h.sums[k] = sum
				continue
			}
			if err := h.apply(al, t, i, out); err != nil {
				return err
			}
			h.pending[k.task] = append(h.pending[k.task], k)
		}
	}
	h.index = index
	return nil
}

// readDest reads a template's rendered file as it is in the task dir.
func readDest(taskDir string, tt *messages.TaskTemplate) ([]byte, error) {
	rel, err := safepath.CleanRel(tt.GetDestPath())
	if err != nil {
		return nil, err
	}
	r, err := os.OpenRoot(taskDir)
	if err != nil {
		return nil, err
	}
	defer r.Close()
	return r.ReadFile(rel)
}

// currentIndex is the variables table's index (0 without templates).
func (h *templateHook) currentIndex(ctx context.Context, al *messages.Allocation) (uint64, error) {
	if !hasTemplates(al) || h.a.spec.Vars == nil {
		return 0, nil
	}
	resp, err := h.read(ctx, &messages.VarReadRequest{Namespace: al.GetNamespace()})
	if err != nil {
		return 0, err
	}
	return resp.GetIndex(), nil
}

func hasTemplates(al *messages.Allocation) bool {
	for _, t := range groupOf(al).GetTasks() {
		if len(t.GetTemplates()) > 0 {
			return true
		}
	}
	return false
}

// renderFirst renders template i of task t, waiting while a variable it
// reads is missing.
func (h *templateHook) renderFirst(ctx context.Context, al *messages.Allocation, t *messages.Task, i int) error {
	for {
		index, err := h.currentIndex(ctx, al)
		if err != nil {
			return err
		}
		out, err := h.render(ctx, al, t, i)
		if errors.Is(err, errVarDenied) {
			// As a missing variable: the task holds pending, and says why.
			h.a.log.Warn("template read refused to the task's workload identity", "task", t.GetName(), "error", err)
			if h.blocked != nil {
				h.blocked(fmt.Errorf("template %d: %w", i, err))
				h.blocked = nil
			}
		}
		if errors.Is(err, rtemplate.ErrMissingVar) || errors.Is(err, errVarDenied) {
			h.a.log.Info("template waits for a variable", "task", t.GetName(), "error", err)
			if _, err := h.read(ctx, &messages.VarReadRequest{Namespace: al.GetNamespace(), MinIndex: index, Wait: int64(varWait)}); err != nil {
				return err
			}
			continue
		}
		if err != nil {
			return fmt.Errorf("task %s: template %d: %w", t.GetName(), i, err)
		}
		return h.apply(al, t, i, out)
	}
}

// render renders template i of task t with the task's environment.
func (h *templateHook) render(ctx context.Context, al *messages.Allocation, t *messages.Task, i int) ([]byte, error) {
	tt := t.GetTemplates()[i]
	text := tt.GetEmbeddedTmpl()
	if tt.GetSourcePath() != "" {
		b, err := readSource(TaskDir(h.a.spec.AllocRoot, al.GetID(), t.GetName()), tt.GetSourcePath())
		if err != nil {
			return nil, err
		}
		text = string(b)
	}
	env := taskEnv(h.a.spec.AllocRoot, h.a.spec.Node, al, t, h.a.network.rec)
	var src rtemplate.Source
	if h.a.spec.Vars != nil {
		src = &varSource{h: h, token: h.a.idents.token(t.GetName())}
	}
	return rtemplate.Render(ctx, rtemplate.Spec{Text: text, Left: tt.GetLeftDelim(), Right: tt.GetRightDelim(),
		ErrMissingKey: tt.GetErrMissingKey(), Namespace: al.GetNamespace(), Env: env, Source: src})
}

// readSource reads a template's source file from the task's directory.
func readSource(taskDir, rel string) ([]byte, error) {
	f, err := safepath.OpenIn(taskDir, rel)
	if err != nil {
		return nil, fmt.Errorf("template source %s: %w", safepath.Quote(rel), err)
	}
	defer f.Close()
	b, err := io.ReadAll(io.LimitReader(f, rtemplate.MaxOutput+1))
	if err == nil && len(b) > rtemplate.MaxOutput {
		err = fmt.Errorf("larger than %d bytes", rtemplate.MaxOutput)
	}
	if err != nil {
		return nil, fmt.Errorf("template source %s: %w", safepath.Quote(rel), err)
	}
	return b, nil
}

// apply writes a rendered template and keeps its sum and, for an env
// template, its variables.
func (h *templateHook) apply(al *messages.Allocation, t *messages.Task, i int, out []byte) error {
	tt := t.GetTemplates()[i]
	if err := writeTemplate(TaskDir(h.a.spec.AllocRoot, al.GetID(), t.GetName()), tt, out); err != nil {
		return fmt.Errorf("task %s: template %d: %w", t.GetName(), i, err)
	}
	h.sums[tmplKey{t.GetName(), i}] = sha256.Sum256(out)
	if tt.GetEnvvars() {
		env, err := rtemplate.ParseEnv(out)
		if err != nil {
			return fmt.Errorf("task %s: template %d: %w", t.GetName(), i, err)
		}
		if h.env[t.GetName()] == nil {
			h.env[t.GetName()] = map[string]string{}
		}
		maps.Copy(h.env[t.GetName()], env)
	}
	return nil
}

// writeTemplate writes out at the template's destination in the task
// directory (never outside it, whatever links the task made), with its
// mode and owner.
func writeTemplate(taskDir string, tt *messages.TaskTemplate, out []byte) error {
	rel, err := safepath.CleanRel(tt.GetDestPath())
	if err != nil {
		return err
	}
	dest := filepath.Join(taskDir, rel)
	if err := safepath.MkdirAll(taskDir, filepath.Dir(dest), 0o755); err != nil {
		return err
	}
	perm, err := strconv.ParseUint(tt.GetPerms(), 8, 32)
	if err != nil || tt.GetPerms() == "" {
		perm = 0o644
	}
	if err := safepath.WriteFileAtomic(taskDir, dest, out, os.FileMode(perm)); err != nil {
		return err
	}
	r, err := os.OpenRoot(taskDir)
	if err != nil {
		return err
	}
	defer r.Close()
	if err := r.Chmod(rel, os.FileMode(perm)); err != nil {
		return err
	}
	if tt.Uid != nil || tt.Gid != nil {
		uid, gid := -1, -1
		if tt.Uid != nil {
			uid = int(tt.GetUid())
		}
		if tt.Gid != nil {
			gid = int(tt.GetGid())
		}
		if err := r.Lchown(rel, uid, gid); err != nil {
			return err
		}
	}
	return nil
}

func (h *templateHook) read(ctx context.Context, req *messages.VarReadRequest) (*messages.VarReadResponse, error) {
	return h.readAs(ctx, "", req)
}

// readAs reads with the workload identity token (a JWT; "": without
// one, through Spec.Vars). A refusal is errVarDenied.
func (h *templateHook) readAs(ctx context.Context, token string, req *messages.VarReadRequest) (*messages.VarReadResponse, error) {
	if h.a.spec.Vars == nil {
		return nil, errors.New("template: this client reads no variables")
	}
	if req.GetMinIndex() > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, varWait+3*time.Second)
		defer cancel()
	}
	var resp *messages.VarReadResponse
	var err error
	if ids := h.a.spec.Identities; token != "" && ids != nil {
		resp, err = ids.ReadVarsAs(ctx, token, req)
	} else {
		resp, err = h.a.spec.Vars.ReadVars(ctx, req)
	}
	var coded interface{ ErrorCode() messages.ErrorCode }
	switch {
	case errors.As(err, &coded) && coded.ErrorCode() == messages.CodePermissionDenied:
		err = fmt.Errorf("%w: %w", errVarDenied, err) // a remote server's refusal
	case err != nil:
	case resp.GetError().ErrorCode() == messages.CodePermissionDenied:
		err = fmt.Errorf("%w: %s", errVarDenied, resp.GetError().GetMessage())
	case resp.GetError() != nil:
		err = errors.New(resp.GetError().GetMessage())
	}
	if err != nil {
		return nil, fmt.Errorf("template: reading variables: %w", err)
	}
	return resp, nil
}

// varSource is runtime/template's Source over the servers, read with a
// task's workload identity (token).
type varSource struct {
	h     *templateHook
	token string
}

func (s *varSource) Get(ctx context.Context, ns, path string) (*rtemplate.Var, error) {
	resp, err := s.h.readAs(ctx, s.token, &messages.VarReadRequest{Namespace: ns, Path: path})
	if err != nil || len(resp.GetVars()) == 0 {
		return nil, err
	}
	v := resp.GetVars()[0]
	return &rtemplate.Var{Namespace: ns, Path: v.GetPath(), Items: v.GetItems(), CreateIndex: v.GetCreateIndex(), ModifyIndex: v.GetModifyIndex()}, nil
}

func (s *varSource) List(ctx context.Context, ns, prefix string) ([]*rtemplate.Var, error) {
	resp, err := s.h.readAs(ctx, s.token, &messages.VarReadRequest{Namespace: ns, Path: prefix, List: true})
	if err != nil {
		return nil, err
	}
	out := make([]*rtemplate.Var, 0, len(resp.GetVars()))
	for _, v := range resp.GetVars() {
		out = append(out, &rtemplate.Var{Namespace: ns, Path: v.GetPath(), CreateIndex: v.GetCreateIndex(), ModifyIndex: v.GetModifyIndex()})
	}
	return out, nil
}

// Services implements runtime/template's ServiceSource: a service's
// registrations, as a server has them.
func (s *varSource) Services(ctx context.Context, ns, name string) ([]*rtemplate.Service, error) {
	resp, err := s.h.readAs(ctx, s.token, &messages.VarReadRequest{Namespace: ns, Service: name})
	if err != nil {
		return nil, err
	}
	return servicesOf(resp.GetServices()), nil
}

// AllServices: every registration of the namespace.
func (s *varSource) AllServices(ctx context.Context, ns string) ([]*rtemplate.Service, error) {
	resp, err := s.h.readAs(ctx, s.token, &messages.VarReadRequest{Namespace: ns, ListServices: true})
	if err != nil {
		return nil, err
	}
	return servicesOf(resp.GetServices()), nil
}

func servicesOf(regs []*messages.ServiceRegistration) []*rtemplate.Service {
	out := make([]*rtemplate.Service, 0, len(regs))
	for _, r := range regs {
		out = append(out, &rtemplate.Service{ID: r.GetID(), Name: r.GetServiceName(), Namespace: r.GetNamespace(),
			NodeID: r.GetNodeID(), Datacenter: r.GetDatacenter(), JobID: r.GetJobID(), AllocID: r.GetAllocID(),
			Tags: r.GetTags(), Address: r.GetAddress(), Port: int(r.GetPort())})
	}
	return out
}
