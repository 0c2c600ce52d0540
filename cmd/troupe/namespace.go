package main

import (
	"fmt"
	"io"

	"github.com/troupe-dev/troupe/api"
	"github.com/troupe-dev/troupe/messages"
)

// namespaceCommands are `troupe namespace <sub>`.
func namespaceCommands() *cmdNode {
	return &cmdNode{synopsis: "Create, inspect and delete namespaces", subs: map[string]*cmdNode{
		"list":   {synopsis: "List namespaces", run: namespaceListCommand},
		"status": {synopsis: "Show a namespace", run: namespaceStatusCommand},
		"apply":  {synopsis: "Create or update a namespace", run: namespaceApplyCommand},
		"delete": {synopsis: "Delete a namespace that no live job or volume uses", run: namespaceDeleteCommand},
	}}
}

// namespaceListCommand is `troupe namespace list [-json] [-prefix P]`.
func namespaceListCommand(args []string, stdout, stderr io.Writer) int {
	m := newMeta("namespace list", stdout, stderr, true)
	setHelp(m, "namespace list [options]", "Lists the namespaces, by name.")
	prefix := m.fs.String("prefix", "", "only the namespaces whose name starts with this")
	c, code, ok := m.parseNone(args)
	if !ok {
		return code
	}
	nss, _, err := c.Namespaces().List(&api.QueryOptions{Prefix: *prefix})
	if err != nil {
		return m.fail("listing namespaces", err)
	}
	if m.json {
		return m.printJSON(nss)
	}
	if len(nss) == 0 {
		fmt.Fprintln(m.stdout, "No namespaces found")
		return exitOK
	}
	rows := make([][]string, 0, len(nss))
	for _, ns := range nss {
		rows = append(rows, []string{ns.Name, orNone(ns.Description)})
	}
	writeTable(m.stdout, []string{"Name", "Description"}, rows)
	return exitOK
}

// namespaceStatusCommand is `troupe namespace status [-json] NAME`.
func namespaceStatusCommand(args []string, stdout, stderr io.Writer) int {
	m := newMeta("namespace status", stdout, stderr, true)
	setHelp(m, "namespace status [options] NAME", "Shows a namespace: its description and metadata.")
	name, c, code, ok := m.parseOne(args, "NAME")
	if !ok {
		return code
	}
	ns, _, err := c.Namespaces().Info(name, nil)
	if err != nil {
		return m.fail("querying the namespace", err)
	}
	if m.json {
		return m.printJSON(ns)
	}
	writeKV(m.stdout, []kv{{"Name", ns.Name}, {"Description", orNone(ns.Description)}})
	fmt.Fprintln(m.stdout, "\nMetadata")
	if len(ns.Meta) == 0 {
		fmt.Fprintln(m.stdout, "No metadata")
		return exitOK
	}
	pairs := make([]kv, 0, len(ns.Meta))
	for _, k := range sortedKeys(ns.Meta) {
		pairs = append(pairs, kv{k, ns.Meta[k]})
	}
	writeKV(m.stdout, pairs)
	return exitOK
}

// namespaceApplyCommand is `troupe namespace apply [-description D] NAME`:
// it creates the namespace, or replaces its description (and keeps its
// metadata).
func namespaceApplyCommand(args []string, stdout, stderr io.Writer) int {
	m := newMeta("namespace apply", stdout, stderr, false)
	setHelp(m, "namespace apply [options] NAME", `Creates a namespace, or sets its description.`)
	desc := m.fs.String("description", "", "the namespace's description")
	name, c, code, ok := m.parseOne(args, "NAME")
	if !ok {
		return code
	}
	ns := &messages.Namespace{Name: name, Description: *desc}
	if old, _, err := c.Namespaces().Info(name, nil); err == nil {
		ns.Meta = old.Meta // apply changes the description only
	}
	if _, err := c.Namespaces().Register(ns, nil); err != nil {
		return m.fail("applying the namespace", err)
	}
	fmt.Fprintf(m.stdout, "Successfully applied namespace %q!\n", name)
	return exitOK
}

// namespaceDeleteCommand is `troupe namespace delete NAME`.
func namespaceDeleteCommand(args []string, stdout, stderr io.Writer) int {
	m := newMeta("namespace delete", stdout, stderr, false)
	setHelp(m, "namespace delete [options] NAME", `Deletes a namespace. A namespace that still has jobs that are not dead,
  or volumes, cannot be deleted, nor can "default".`)
	name, c, code, ok := m.parseOne(args, "NAME")
	if !ok {
		return code
	}
	if _, err := c.Namespaces().Delete(name, nil); err != nil {
		return m.fail("deleting the namespace", err)
	}
	fmt.Fprintf(m.stdout, "Successfully deleted namespace %q!\n", name)
	return exitOK
}
