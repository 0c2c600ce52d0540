package main

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/troupe-dev/troupe/api"
	"github.com/troupe-dev/troupe/jobspec"
	"github.com/troupe-dev/troupe/messages"
)

// nodePoolCommands are `troupe node pool <sub>`.
func nodePoolCommands() *cmdNode {
	return &cmdNode{synopsis: "Create, inspect and delete node pools", subs: map[string]*cmdNode{
		"list":   {synopsis: "List node pools", run: nodePoolListCommand},
		"info":   {synopsis: "Show a node pool", run: nodePoolInfoCommand},
		"apply":  {synopsis: "Create or update a node pool from a specification file", run: nodePoolApplyCommand},
		"delete": {synopsis: "Delete a node pool that no node or live job uses", run: nodePoolDeleteCommand},
		"nodes":  {synopsis: "List the nodes in a node pool", run: nodePoolNodesCommand},
		"jobs":   {synopsis: "List the jobs in a node pool", run: nodePoolJobsCommand},
	}}
}

// nodePoolListCommand is `troupe node pool list [-json] [-prefix P]`.
func nodePoolListCommand(args []string, stdout, stderr io.Writer) int {
	m := newMeta("node pool list", stdout, stderr, true)
	setHelp(m, "node pool list [options]", "Lists the node pools, by name.")
	prefix := m.fs.String("prefix", "", "only the pools whose name starts with this")
	c, code, ok := m.parseNone(args)
	if !ok {
		return code
	}
	pools, _, err := c.NodePools().List(&api.QueryOptions{Prefix: *prefix})
	if err != nil {
		return m.fail("listing node pools", err)
	}
	if m.json {
		return m.printJSON(pools)
	}
	if len(pools) == 0 {
		fmt.Fprintln(m.stdout, "No node pools found")
		return exitOK
	}
	rows := make([][]string, 0, len(pools))
	for _, p := range pools {
		rows = append(rows, []string{p.Name, orNone(p.Description)})
	}
	writeTable(m.stdout, []string{"Name", "Description"}, rows)
	return exitOK
}

// nodePoolInfoCommand is `troupe node pool info [-json] NAME`.
func nodePoolInfoCommand(args []string, stdout, stderr io.Writer) int {
	m := newMeta("node pool info", stdout, stderr, true)
	setHelp(m, "node pool info [options] NAME", "Shows a node pool: its description and metadata.")
	name, c, code, ok := m.parseOne(args, "NAME")
	if !ok {
		return code
	}
	p, _, err := c.NodePools().Info(name, nil)
	if err != nil {
		return m.fail("querying the node pool", err)
	}
	if m.json {
		return m.printJSON(p)
	}
	writeKV(m.stdout, []kv{{"Name", p.Name}, {"Description", orNone(p.Description)}})
	fmt.Fprintln(m.stdout, "\nMetadata")
	if len(p.Meta) == 0 {
		fmt.Fprintln(m.stdout, "No metadata")
		return exitOK
	}
	pairs := make([]kv, 0, len(p.Meta))
	for _, k := range sortedKeys(p.Meta) {
		pairs = append(pairs, kv{k, p.Meta[k]})
	}
	writeKV(m.stdout, pairs)
	return exitOK
}

// nodePoolApplyCommand is `troupe node pool apply FILE` (HCL, or JSON).
func nodePoolApplyCommand(args []string, stdout, stderr io.Writer) int {
	m := newMeta("node pool apply", stdout, stderr, false)
	setHelp(m, "node pool apply [options] FILE", `Creates a node pool, or replaces its description and metadata, from a
  specification file: node_pool "name" { description = "..." meta { k = "v" } }
  in HCL, or a NodePool in JSON when the name ends in .json.`)
	path, c, code, ok := m.parseOne(args, "FILE")
	if !ok {
		return code
	}
	pool, err := readNodePoolFile(path)
	if err != nil {
		return m.fail("parsing the node pool file", err)
	}
	if _, err := c.NodePools().Register(pool, nil); err != nil {
		return m.fail("applying the node pool", err)
	}
	fmt.Fprintf(m.stdout, "Successfully applied node pool %q!\n", pool.GetName())
	return exitOK
}

// readNodePoolFile reads a node pool specification, JSON when the name
// ends in .json.
func readNodePoolFile(path string) (*messages.NodePool, error) {
	src, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	if strings.EqualFold(filepath.Ext(path), ".json") {
		return jobspec.ParseNodePoolJSON(src)
	}
	return jobspec.ParseNodePool(path, src)
}

// nodePoolDeleteCommand is `troupe node pool delete NAME`.
func nodePoolDeleteCommand(args []string, stdout, stderr io.Writer) int {
	m := newMeta("node pool delete", stdout, stderr, false)
	setHelp(m, "node pool delete [options] NAME", `Deletes a node pool. A pool that still has nodes, or jobs that are
  not dead, cannot be deleted, nor can the built-in "default" and "all".`)
	name, c, code, ok := m.parseOne(args, "NAME")
	if !ok {
		return code
	}
	if _, err := c.NodePools().Delete(name, nil); err != nil {
		return m.fail("deleting the node pool", err)
	}
	fmt.Fprintf(m.stdout, "Successfully deleted node pool %q!\n", name)
	return exitOK
}

// nodePoolNodesCommand is `troupe node pool nodes [-json] [-verbose] NAME`.
func nodePoolNodesCommand(args []string, stdout, stderr io.Writer) int {
	m := newMeta("node pool nodes", stdout, stderr, true)
	setHelp(m, "node pool nodes [options] NAME", `Lists the nodes in a node pool ("all": every node).`)
	verbose := m.fs.Bool("verbose", false, "show full IDs")
	name, c, code, ok := m.parseOne(args, "NAME")
	if !ok {
		return code
	}
	nodes, _, err := c.NodePools().ListNodes(name, nil)
	if err != nil {
		return m.fail("querying the node pool's nodes", err)
	}
	return printNodes(m, nodes, *verbose)
}

// nodePoolJobsCommand is `troupe node pool jobs [-json] NAME`.
func nodePoolJobsCommand(args []string, stdout, stderr io.Writer) int {
	m := newMeta("node pool jobs", stdout, stderr, true)
	setHelp(m, "node pool jobs [options] NAME", "Lists the jobs in a node pool.")
	name, c, code, ok := m.parseOne(args, "NAME")
	if !ok {
		return code
	}
	jobs, _, err := c.NodePools().ListJobs(name, nil)
	if err != nil {
		return m.fail("querying the node pool's jobs", err)
	}
	return printJobs(m, jobs)
}
