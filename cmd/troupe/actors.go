package main

import (
	"fmt"
	"io"
	"sort"
	"strings"
	"text/tabwriter"

	"github.com/troupe-dev/troupe/api"
)

// actorNode is one actor with its children, built from the flat list.
type actorNode struct {
	info     *api.ActorInfo
	children []*actorNode
}

// actorsCommand is `troupe actors [-json] [-kind K] [-node ID] [PATH]`.
func actorsCommand(args []string, stdout, stderr io.Writer) int {
	m := newMeta("actors", stdout, stderr, true)
	kind := m.fs.String("kind", "", "show only actors of this kind (and their ancestors)")
	nodeID := m.fs.String("node", "", "the node whose actors to show (default: the agent's own)")
	rest, code, ok := m.parse(args)
	if !ok {
		return code
	}
	if len(rest) > 1 {
		return m.usageError("[PATH]")
	}
	c, err := m.client()
	if err != nil {
		return m.fail("creating the API client", err)
	}
	tree, err := fetchActorTree(c, *nodeID)
	if err != nil {
		return m.fail("querying actors", err)
	}
	roots := buildActorForest(tree.Actors)
	if len(rest) == 1 {
		sub := findActor(roots, strings.Trim(rest[0], "/"))
		if sub == nil {
			return m.fail("finding actor", fmt.Errorf("%w: no actor at path %q", errNoMatch, rest[0]))
		}
		roots = []*actorNode{sub}
	}
	if *kind != "" {
		roots = filterKind(roots, *kind)
	}
	if m.json {
		return m.printJSON(&api.ActorTree{Node: tree.Node, Actors: flattenActors(roots)})
	}
	if len(roots) == 0 {
		fmt.Fprintln(m.stdout, "No actors")
		return exitOK
	}
	writeActorTree(m.stdout, tree.Node, roots)
	return exitOK
}

// fetchActorTree reads the tree of nodeID, accepting a node ID prefix.
func fetchActorTree(c *api.Client, nodeID string) (*api.ActorTree, error) {
	tree, err := c.Actors().Tree(nodeID)
	if err == nil || nodeID == "" || !api.IsNotFound(err) {
		return tree, err
	}
	node, nerr := lookupNode(c, nodeID)
	if nerr != nil {
		return nil, nerr
	}
	return c.Actors().Tree(node.ID)
}

// buildActorForest links actors to their parents; actors whose parent is
// not in the list are roots. Children are sorted by path.
func buildActorForest(actors []*api.ActorInfo) []*actorNode {
	byPath := make(map[string]*actorNode, len(actors))
	for _, a := range actors {
		byPath[a.Path] = &actorNode{info: a}
	}
	var roots []*actorNode
	for _, a := range actors {
		n := byPath[a.Path]
		if p, ok := byPath[a.Parent]; ok && a.Parent != a.Path {
			p.children = append(p.children, n)
		} else {
			roots = append(roots, n)
		}
	}
	sortActors(roots)
	for _, n := range byPath {
		sortActors(n.children)
	}
	return roots
}

func sortActors(nodes []*actorNode) {
	sort.Slice(nodes, func(i, j int) bool { return nodes[i].info.Path < nodes[j].info.Path })
}

// findActor is the node at path, searched depth first.
func findActor(nodes []*actorNode, path string) *actorNode {
	for _, n := range nodes {
		if strings.Trim(n.info.Path, "/") == path {
			return n
		}
		if found := findActor(n.children, path); found != nil {
			return found
		}
	}
	return nil
}

// filterKind keeps the actors of kind and their ancestors.
func filterKind(nodes []*actorNode, kind string) []*actorNode {
	var out []*actorNode
	for _, n := range nodes {
		kept := filterKind(n.children, kind)
		if n.info.Kind == kind || len(kept) > 0 {
			out = append(out, &actorNode{info: n.info, children: kept})
		}
	}
	return out
}

func flattenActors(nodes []*actorNode) []*api.ActorInfo {
	var out []*api.ActorInfo
	for _, n := range nodes {
		out = append(out, n.info)
		out = append(out, flattenActors(n.children)...)
	}
	return out
}

// writeActorTree draws the forest like tree(1), columns aligned.
func writeActorTree(w io.Writer, node string, roots []*actorNode) {
	if node != "" {
		fmt.Fprintf(w, "node %s\n", node)
	}
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	writeActorLevel(tw, "", "", roots)
	_ = tw.Flush()
}

func writeActorLevel(w io.Writer, indent, parent string, nodes []*actorNode) {
	for i, n := range nodes {
		branch, next := "├── ", "│   "
		if i == len(nodes)-1 {
			branch, next = "└── ", "    "
		}
		fmt.Fprintf(w, "%s%s%s\t%s\n", indent, branch, actorName(n.info, parent), actorColumns(n.info))
		writeActorLevel(w, indent+next, n.info.Path, n.children)
	}
}

// actorName is the path relative to the parent shown above it.
func actorName(a *api.ActorInfo, parent string) string {
	if parent != "" && strings.HasPrefix(a.Path, parent+"/") {
		return strings.TrimPrefix(a.Path, parent+"/")
	}
	return a.Path
}

// actorColumns is "kind\tphase\tmailbox=N restarts=N last=Type (3s ago)".
func actorColumns(a *api.ActorInfo) string {
	last := "-"
	if a.LastMessage != "" {
		last = a.LastMessage
		if a.LastMessageAt != 0 {
			last += " (" + timeAgo(a.LastMessageAt) + ")"
		}
	}
	return fmt.Sprintf("%s\t%s\tmailbox=%d restarts=%d last=%s",
		orNone(a.Kind), orNone(a.Phase), a.MailboxLen, a.Restarts, last)
}
