package acl

import "strings"

// ACL is the compiled form of a token's policies. The zero value (and
// nil) allows nothing; Management allows everything.
type ACL struct {
	management bool
	namespaces rules[*nsRule]
	hostVols   rules[capSet]
	node       level
	agent      level
	operator   level
	plugin     level
	quota      level
	// workload: a workload identity's implicit rules (workload.go).
	workload *Workload
}

// Management is the ACL of a management token.
var Management = &ACL{management: true}

type capSet map[string]bool

type nsRule struct {
	caps capSet
	vars rules[capSet]
}

// level is a node/agent/operator/plugin/quota policy: the zero value is
// none, then list, read, write, deny in increasing order of what wins.
type level int

const (
	levelNone level = iota
	levelList
	levelRead
	levelWrite
	levelDeny
)

func parseLevel(s string) level {
	switch s {
	case PolicyDeny:
		return levelDeny
	case PolicyRead:
		return levelRead
	case PolicyList:
		return levelList
	case PolicyWrite:
		return levelWrite
	}
	return levelNone
}

// merge keeps the stronger of two levels: deny over anything, else the
// more permissive.
func (l level) merge(o level) level { return max(l, o) }

func (l level) allows(want level) bool { return l != levelDeny && l >= want }

// rules are named rules, some of them globs (with "*").
type rules[T any] struct {
	exact map[string]T
	globs map[string]T
}

func (r *rules[T]) get(name string, fresh func() T) T {
	m := &r.exact
	if strings.Contains(name, "*") {
		m = &r.globs
	}
	if *m == nil {
		*m = map[string]T{}
	}
	v, ok := (*m)[name]
	if !ok {
		v = fresh()
		(*m)[name] = v
	}
	return v
}

// lookup finds name's rule: the exact one, else the closest glob (the
// one with the longest literal part; ties go to the lexically smallest).
func (r *rules[T]) lookup(name string) (T, bool) {
	if v, ok := r.exact[name]; ok {
		return v, true
	}
	var best T
	bestLen, bestGlob, found := -1, "", false
	for g, v := range r.globs {
		if !Glob(g, name) {
			continue
		}
		n := len(strings.ReplaceAll(g, "*", ""))
		if n > bestLen || n == bestLen && g < bestGlob {
			best, bestLen, bestGlob, found = v, n, g, true
		}
	}
	return best, found
}

// Glob reports whether name matches pattern, in which "*" stands for any
// run of characters (Nomad's glob).
func Glob(pattern, name string) bool {
	parts := strings.Split(pattern, "*")
	if len(parts) == 1 {
		return pattern == name
	}
	if !strings.HasPrefix(name, parts[0]) {
		return false
	}
	name = name[len(parts[0]):]
	last := parts[len(parts)-1]
	for _, p := range parts[1 : len(parts)-1] {
		i := strings.Index(name, p)
		if i < 0 {
			return false
		}
		name = name[i+len(p):]
	}
	return strings.HasSuffix(name, last)
}

// Compile merges policies into one ACL.
func Compile(policies ...*Policy) *ACL {
	a := &ACL{}
	for _, p := range policies {
		a.add(p)
	}
	return a
}

func (a *ACL) add(p *Policy) {
	for _, ns := range p.Namespaces {
		r := a.namespaces.get(ns.Name, func() *nsRule { return &nsRule{caps: capSet{}} })
		addCaps(r.caps, ns.Capabilities)
		if ns.Variables == nil {
			continue
		}
		for _, pr := range ns.Variables.Paths {
			addCaps(r.vars.get(pr.Path, func() capSet { return capSet{} }), pr.Capabilities)
		}
	}
	for _, hv := range p.HostVolumes {
		addCaps(a.hostVols.get(hv.Name, func() capSet { return capSet{} }), hv.Capabilities)
	}
	for _, l := range []struct {
		dst *level
		r   *LevelRule
	}{{&a.node, p.Node}, {&a.agent, p.Agent}, {&a.operator, p.Operator}, {&a.plugin, p.Plugin}, {&a.quota, p.Quota}} {
		if l.r != nil {
			*l.dst = l.dst.merge(parseLevel(l.r.Policy))
		}
	}
}

func addCaps(dst capSet, caps []string) {
	for _, c := range caps {
		dst[c] = true
	}
}

func (c capSet) allows(cap string) bool { return !c[NsDeny] && c[cap] }

// IsManagement reports whether a is a management ACL.
func (a *ACL) IsManagement() bool { return a != nil && a.management }

// AllowNamespaceOperation reports whether a may do cap in namespace ns.
func (a *ACL) AllowNamespaceOperation(ns, cap string) bool {
	if a == nil {
		return false
	}
	if a.management {
		return true
	}
	r, ok := a.namespaces.lookup(ns)
	return ok && r.caps.allows(cap)
}

// AllowNamespace reports whether a may do anything in namespace ns (see
// it in a list of namespaces).
func (a *ACL) AllowNamespace(ns string) bool {
	if a == nil {
		return false
	}
	if a.management {
		return true
	}
	if a.workload != nil {
		return ns == a.workload.Namespace
	}
	r, ok := a.namespaces.lookup(ns)
	if !ok || r.caps[NsDeny] {
		return false
	}
	if len(r.caps) > 0 {
		return true
	}
	for _, c := range r.vars.exact {
		if !c[VarDeny] && len(c) > 0 {
			return true
		}
	}
	return len(r.vars.globs) > 0
}

// AllowVariableOperation reports whether a may do cap (read, list, write,
// destroy) on the variable at path in namespace ns.
func (a *ACL) AllowVariableOperation(ns, path, cap string) bool {
	if a == nil {
		return false
	}
	if a.management {
		return true
	}
	if a.workload != nil {
		return a.workload.allowsVar(ns, path, cap)
	}
	r, ok := a.namespaces.lookup(ns)
	if !ok || r.caps[NsDeny] {
		return false
	}
	c, ok := r.vars.lookup(path)
	return ok && c.allows(cap)
}

// AllowHostVolumeOperation reports whether a may do cap on host volume name.
func (a *ACL) AllowHostVolumeOperation(name, cap string) bool {
	if a == nil {
		return false
	}
	if a.management {
		return true
	}
	c, ok := a.hostVols.lookup(name)
	return ok && c.allows(cap)
}

func (a *ACL) allowLevel(pick func(*ACL) level, want level) bool {
	if a == nil {
		return false
	}
	return a.management || pick(a).allows(want)
}

// AllowNodeRead reports whether a may read nodes.
func (a *ACL) AllowNodeRead() bool {
	return a.allowLevel(func(a *ACL) level { return a.node }, levelRead)
}

// AllowNodeWrite reports whether a may change nodes (drain, eligibility).
func (a *ACL) AllowNodeWrite() bool {
	return a.allowLevel(func(a *ACL) level { return a.node }, levelWrite)
}

// AllowAgentRead reports whether a may read agent information.
func (a *ACL) AllowAgentRead() bool {
	return a.allowLevel(func(a *ACL) level { return a.agent }, levelRead)
}

// AllowAgentWrite reports whether a may change the agent.
func (a *ACL) AllowAgentWrite() bool {
	return a.allowLevel(func(a *ACL) level { return a.agent }, levelWrite)
}

// AllowOperatorRead reports whether a may read operator information (raft
// peers, scheduler configuration).
func (a *ACL) AllowOperatorRead() bool {
	return a.allowLevel(func(a *ACL) level { return a.operator }, levelRead)
}

// AllowOperatorWrite reports whether a may change operator settings.
func (a *ACL) AllowOperatorWrite() bool {
	return a.allowLevel(func(a *ACL) level { return a.operator }, levelWrite)
}

// AllowPluginRead reports whether a may read CSI plugins.
func (a *ACL) AllowPluginRead() bool {
	return a.allowLevel(func(a *ACL) level { return a.plugin }, levelRead)
}

// AllowPluginList reports whether a may list CSI plugins (read allows it too).
func (a *ACL) AllowPluginList() bool {
	return a.allowLevel(func(a *ACL) level { return a.plugin }, levelList)
}

// AllowQuotaRead reports whether a may read quotas.
func (a *ACL) AllowQuotaRead() bool {
	return a.allowLevel(func(a *ACL) level { return a.quota }, levelRead)
}
