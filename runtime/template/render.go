package template

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"sort"
	"strings"
	"text/template"
)

// MaxOutput bounds a rendered file: a template that loops without end
// fails instead of filling the agent's disk or memory.
const MaxOutput = 4 << 20

// ErrMissingVar: a template reads with nomadVar a variable that does not
// exist (yet).
var ErrMissingVar = errors.New("template: missing variable")

// ErrTooLarge: the output passed MaxOutput.
var ErrTooLarge = errors.New("template: output too large")

// Var is a variable as a template reads it.
type Var struct {
	Namespace   string
	Path        string
	Items       map[string]string
	CreateIndex uint64
	ModifyIndex uint64
}

// Source reads variables (from the servers). Get answers nil, nil for a
// variable that does not exist; List the variables under prefix, without
// their items.
type Source interface {
	Get(ctx context.Context, namespace, path string) (*Var, error)
	List(ctx context.Context, namespace, prefix string) ([]*Var, error)
}

// Spec is one render: the template's text and delimiters, and what its
// functions read.
type Spec struct {
	Text        string
	Left, Right string // "" is {{ and }}
	// ErrMissingKey makes a missing map key an error instead of "<no value>".
	ErrMissingKey bool
	Namespace     string
	// Env is what env "NAME" reads: the task's environment.
	Env    map[string]string
	Source Source // nil: the variable functions fail
}

// Render renders s. Missing variables read with nomadVar are named in an
// error that wraps ErrMissingVar.
func Render(ctx context.Context, s Spec) ([]byte, error) {
	r := &renderer{ctx: ctx, spec: s}
	t := template.New("template").Delims(s.Left, s.Right).Funcs(r.funcs())
	if s.ErrMissingKey {
		t = t.Option("missingkey=error")
	}
	t, err := t.Parse(s.Text)
	if err != nil {
		return nil, fmt.Errorf("template: parse: %w", err)
	}
	out := &limitedBuffer{max: MaxOutput}
	err = t.Execute(out, nil)
	if len(r.missing) > 0 {
		sort.Strings(r.missing)
		return nil, fmt.Errorf("%w: %s", ErrMissingVar, strings.Join(r.missing, ", "))
	}
	if err != nil {
		if errors.Is(err, ErrTooLarge) {
			return nil, fmt.Errorf("%w (more than %d bytes)", ErrTooLarge, MaxOutput)
		}
		return nil, fmt.Errorf("template: execute: %w", err)
	}
	return out.Bytes(), nil
}

// Parse checks that text parses as a template with these delimiters
// and the functions Render gives, without rendering it.
func Parse(text, left, right string) error {
	r := &renderer{}
	_, err := template.New("template").Delims(left, right).Funcs(r.funcs()).Parse(text)
	return err
}

type renderer struct {
	ctx     context.Context
	spec    Spec
	missing []string
}

type limitedBuffer struct {
	bytes.Buffer
	max int
}

func (b *limitedBuffer) Write(p []byte) (int, error) {
	if b.Len()+len(p) > b.max {
		return 0, ErrTooLarge
	}
	return b.Buffer.Write(p)
}

var errNoSource = errors.New("template: this client reads no variables")

func (r *renderer) source() (Source, error) {
	if r.spec.Source == nil {
		return nil, errNoSource
	}
	return r.spec.Source, nil
}

// nomadVar is consul-template's nomadVar: the variable's items. A
// missing variable renders as empty and fails the render (ErrMissingVar).
func (r *renderer) nomadVar(path string) (VarItems, error) {
	src, err := r.source()
	if err != nil {
		return nil, err
	}
	ns, p := r.nsPath(path)
	v, err := src.Get(r.ctx, ns, p)
	if err != nil {
		return nil, fmt.Errorf("nomadVar %q: %w", path, err)
	}
	if v == nil {
		r.missing = append(r.missing, path)
		return VarItems{}, nil
	}
	return itemsOf(v), nil
}

func (r *renderer) nomadVarExists(path string) (bool, error) {
	src, err := r.source()
	if err != nil {
		return false, err
	}
	ns, p := r.nsPath(path)
	v, err := src.Get(r.ctx, ns, p)
	if err != nil {
		return false, fmt.Errorf("nomadVarExists %q: %w", path, err)
	}
	return v != nil, nil
}

// nomadVarList lists the variables under a prefix (all with none).
func (r *renderer) nomadVarList(prefix ...string) ([]*VarMeta, error) {
	src, err := r.source()
	if err != nil {
		return nil, err
	}
	if len(prefix) > 1 {
		return nil, fmt.Errorf("nomadVarList: at most one prefix, got %d", len(prefix))
	}
	p := ""
	if len(prefix) == 1 {
		p = prefix[0]
	}
	ns, p := r.nsPath(p)
	vs, err := src.List(r.ctx, ns, p)
	if err != nil {
		return nil, fmt.Errorf("nomadVarList %q: %w", p, err)
	}
	out := make([]*VarMeta, 0, len(vs))
	for _, v := range vs {
		out = append(out, &VarMeta{Namespace: v.Namespace, Path: v.Path, CreateIndex: v.CreateIndex, ModifyIndex: v.ModifyIndex})
	}
	return out, nil
}

// nsPath splits consul-template's "path@namespace" form.
func (r *renderer) nsPath(path string) (string, string) {
	if i := strings.LastIndex(path, "@"); i >= 0 {
		ns := path[i+1:]
		if j := strings.Index(ns, "."); j >= 0 { // path@namespace.region
			ns = ns[:j]
		}
		return ns, path[:i]
	}
	return r.spec.Namespace, path
}
