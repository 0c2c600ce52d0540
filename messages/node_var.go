package messages

import "strings"

// NodeVarRef is a parsed node variable (ParseNodeVar): reading it on a
// node is one switch and at most one map lookup, for the scheduler's
// checks over many nodes.
type NodeVarRef struct {
	kind nodeVarKind
	key  string // the attribute or meta key
}

type nodeVarKind uint8

const (
	varUnknown nodeVarKind = iota
	varNodeID
	varNodeName
	varDatacenter
	varRegion
	varClass
	varPool
	varAttr
	varMeta
)

var nodeFields = map[string]nodeVarKind{
	"node.unique.id": varNodeID, "node.unique.name": varNodeName, "node.datacenter": varDatacenter,
	"node.region": varRegion, "node.class": varClass, "node.pool": varPool,
}

// ParseNodeVar parses a node variable as jobs write it inside ${}:
// node.unique.id, node.unique.name, node.datacenter, node.region,
// node.class, node.pool, attr.<name> and meta.<key>, also in the index
// form attr["name"], meta["key"]. Any other name gives a reference that
// is never found.
func ParseNodeVar(name string) NodeVarRef {
	if root, rest, ok := strings.Cut(name, `["`); ok && strings.HasSuffix(rest, `"]`) {
		name = root + "." + strings.TrimSuffix(rest, `"]`)
	}
	if k, ok := nodeFields[name]; ok {
		return NodeVarRef{kind: k}
	}
	if k, ok := strings.CutPrefix(name, "attr."); ok {
		return NodeVarRef{kind: varAttr, key: k}
	}
	if k, ok := strings.CutPrefix(name, "meta."); ok {
		return NodeVarRef{kind: varMeta, key: k}
	}
	return NodeVarRef{}
}

// Get is r's value on n. ok is false for an unknown variable, for an
// attribute or meta key n does not have, and always for a nil n (a node
// not known yet).
func (r NodeVarRef) Get(n *Node) (string, bool) {
	if n == nil {
		return "", false
	}
	switch r.kind {
	case varNodeID:
		return n.ID, true
	case varNodeName:
		return n.Name, true
	case varDatacenter:
		return n.Datacenter, true
	case varRegion:
		return n.Region, true
	case varClass:
		return n.NodeClass, true
	case varPool:
		return n.NodePool, true
	case varAttr:
		v, ok := n.Attributes[r.key]
		return v, ok
	case varMeta:
		v, ok := n.Meta[r.key]
		return v, ok
	}
	return "", false
}

// NodeVar is ParseNodeVar(name).Get(n). Constraints in the scheduler and
// interpolation in the client both read nodes this way.
func NodeVar(n *Node, name string) (string, bool) { return ParseNodeVar(name).Get(n) }
