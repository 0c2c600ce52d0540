package acl

import (
	"fmt"
	"slices"
	"strings"

	"github.com/hashicorp/hcl/v2"
	"github.com/hashicorp/hcl/v2/gohcl"
	"github.com/hashicorp/hcl/v2/hclsyntax"
)

// Policy is one parsed policy's rules.
type Policy struct {
	Namespaces  []*NamespaceRule  `hcl:"namespace,block"`
	HostVolumes []*HostVolumeRule `hcl:"host_volume,block"`
	Node        *LevelRule        `hcl:"node,block"`
	Agent       *LevelRule        `hcl:"agent,block"`
	Operator    *LevelRule        `hcl:"operator,block"`
	Plugin      *LevelRule        `hcl:"plugin,block"`
	Quota       *LevelRule        `hcl:"quota,block"`
}

// NamespaceRule is a namespace "name-or-glob" block.
type NamespaceRule struct {
	Name         string          `hcl:"name,label"`
	Policy       string          `hcl:"policy,optional"`
	Capabilities []string        `hcl:"capabilities,optional"`
	Variables    *VariablesBlock `hcl:"variables,block"`
}

// VariablesBlock is a namespace's variables { path "..." {} } block.
type VariablesBlock struct {
	Paths []*PathRule `hcl:"path,block"`
}

// PathRule is one variables path "glob" block.
type PathRule struct {
	Path         string   `hcl:"path,label"`
	Capabilities []string `hcl:"capabilities"`
}

// HostVolumeRule is a host_volume "name-or-glob" block.
type HostVolumeRule struct {
	Name         string   `hcl:"name,label"`
	Policy       string   `hcl:"policy,optional"`
	Capabilities []string `hcl:"capabilities,optional"`
}

// LevelRule is a node, agent, operator, plugin or quota block.
type LevelRule struct {
	Policy string `hcl:"policy"`
}

// Parse parses a policy's rules (HCL). Anything unknown (a block, an
// attribute, a policy level, a capability) is an error naming it.
func Parse(rules string) (*Policy, error) {
	f, diags := hclsyntax.ParseConfig([]byte(rules), "rules.hcl", hcl.InitialPos)
	if diags.HasErrors() {
		return nil, fmt.Errorf("%w: %s", ErrBadPolicy, diags.Error())
	}
	p := &Policy{}
	if diags := gohcl.DecodeBody(f.Body, nil, p); diags.HasErrors() {
		return nil, fmt.Errorf("%w: %s", ErrBadPolicy, diags.Error())
	}
	if err := p.validate(); err != nil {
		return nil, fmt.Errorf("%w: %w", ErrBadPolicy, err)
	}
	for _, ns := range p.Namespaces {
		ns.Capabilities = append(ns.Capabilities, expandNamespacePolicy(ns.Policy)...)
	}
	for _, hv := range p.HostVolumes {
		hv.Capabilities = append(hv.Capabilities, expandHostVolumePolicy(hv.Policy)...)
	}
	return p, nil
}

func (p *Policy) validate() error {
	for _, ns := range p.Namespaces {
		what := fmt.Sprintf("namespace %q", ns.Name)
		if err := checkLevel(what, ns.Policy, true, PolicyDeny, PolicyRead, PolicyWrite, PolicyScale); err != nil {
			return err
		}
		if err := checkCaps(what, ns.Capabilities, nsCaps); err != nil {
			return err
		}
		if ns.Variables == nil {
			continue
		}
		for _, pr := range ns.Variables.Paths {
			if err := checkCaps(fmt.Sprintf("%s variables path %q", what, pr.Path), pr.Capabilities, varCaps); err != nil {
				return err
			}
		}
	}
	for _, hv := range p.HostVolumes {
		what := fmt.Sprintf("host_volume %q", hv.Name)
		if err := checkLevel(what, hv.Policy, true, PolicyDeny, PolicyRead, PolicyWrite); err != nil {
			return err
		}
		if err := checkCaps(what, hv.Capabilities, hostVolCaps); err != nil {
			return err
		}
	}
	levels := []struct {
		name string
		r    *LevelRule
		ok   []string
	}{
		{"node", p.Node, []string{PolicyDeny, PolicyRead, PolicyWrite}},
		{"agent", p.Agent, []string{PolicyDeny, PolicyRead, PolicyWrite}},
		{"operator", p.Operator, []string{PolicyDeny, PolicyRead, PolicyWrite}},
		{"quota", p.Quota, []string{PolicyDeny, PolicyRead, PolicyWrite}},
		{"plugin", p.Plugin, []string{PolicyDeny, PolicyRead, PolicyList}},
	}
	for _, l := range levels {
		if l.r == nil {
			continue
		}
		if err := checkLevel(l.name, l.r.Policy, false, l.ok...); err != nil {
			return err
		}
	}
	return nil
}

func checkLevel(what, level string, optional bool, ok ...string) error {
	if level == "" && optional || slices.Contains(ok, level) {
		return nil
	}
	return fmt.Errorf("%s: unknown policy %q (want one of %s)", what, level, strings.Join(ok, ", "))
}

func checkCaps(what string, caps []string, known map[string]bool) error {
	for _, c := range caps {
		if !known[c] {
			return fmt.Errorf("%s: unknown capability %q", what, c)
		}
	}
	return nil
}
