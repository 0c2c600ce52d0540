package main

import (
	"fmt"
	"io"
	"strconv"
	"strings"

	"github.com/troupe-dev/troupe/api"
)

// varCommands are `troupe var <sub>`.
func varCommands() *cmdNode {
	return &cmdNode{synopsis: "Read, write, list and purge variables", subs: map[string]*cmdNode{
		"get":   {synopsis: "Show a variable and its items", run: varGetCommand},
		"put":   {synopsis: "Write a variable's items (key=value ...)", run: varPutCommand},
		"list":  {synopsis: "List variables by path prefix, without their items", run: varListCommand},
		"purge": {synopsis: "Delete a variable", run: varPurgeCommand},
	}}
}

// varGetCommand is `troupe var get [-json] [-namespace NS] PATH`.
func varGetCommand(args []string, stdout, stderr io.Writer) int {
	m := newMeta("var get", stdout, stderr, true)
	setHelp(m, "var get [options] PATH", "Shows a variable: its metadata and items.")
	path, c, code, ok := m.parseOne(args, "PATH")
	if !ok {
		return code
	}
	v, _, err := c.Variables().Read(path, nil)
	if err != nil {
		return m.fail("reading the variable", err)
	}
	if m.json {
		return m.printJSON(v)
	}
	writeVariable(m.stdout, v)
	return exitOK
}

func writeVariable(w io.Writer, v *api.Variable) {
	writeKV(w, []kv{{"Namespace", v.Namespace}, {"Path", v.Path},
		{"Create Time", formatTime(v.CreateTime)}, {"Modify Time", formatTime(v.ModifyTime)},
		{"Check Index", strconv.FormatUint(v.ModifyIndex, 10)}})
	fmt.Fprintln(w, "\nItems")
	pairs := make([]kv, 0, len(v.Items))
	for _, k := range sortedKeys(v.Items) {
		pairs = append(pairs, kv{k, v.Items[k]})
	}
	writeKV(w, pairs)
}

// varPutCommand is `troupe var put [-check-index N] [-namespace NS] PATH
// key=value ...`: it replaces the variable's items.
func varPutCommand(args []string, stdout, stderr io.Writer) int {
	m := newMeta("var put", stdout, stderr, true)
	setHelp(m, "var put [options] PATH key=value ...", "Writes a variable: its items become the given ones.")
	checkIndex := m.fs.Int64("check-index", -1, "write only if the variable's modify index is this (0: only if it does not exist)")
	rest, code, ok := m.parse(args)
	if !ok {
		return code
	}
	if len(rest) < 2 {
		return m.usageError("PATH key=value ...")
	}
	items := map[string]string{}
	for _, pair := range rest[1:] {
		k, v, found := strings.Cut(pair, "=")
		if !found || k == "" {
			return m.usageError(fmt.Sprintf("PATH key=value ... (%q is not key=value)", pair))
		}
		items[k] = v
	}
	c, err := m.client()
	if err != nil {
		return m.fail("creating the API client", err)
	}
	check := *checkIndex >= 0
	v, _, err := c.Variables().Put(rest[0], items, check, uint64(max(*checkIndex, 0)), nil)
	if err != nil {
		return m.fail("writing the variable", err)
	}
	if m.json {
		return m.printJSON(v)
	}
	fmt.Fprintf(m.stdout, "Wrote variable %q at index %d\n", v.Path, v.ModifyIndex)
	return exitOK
}

// varListCommand is `troupe var list [-json] [-namespace NS] [PREFIX]`.
func varListCommand(args []string, stdout, stderr io.Writer) int {
	m := newMeta("var list", stdout, stderr, true)
	setHelp(m, "var list [options] [PREFIX]", "Lists the variables whose path starts with PREFIX, without their items.")
	filter := filterFlag(m, "variables")
	rest, code, ok := m.parse(args)
	if !ok {
		return code
	}
	if len(rest) > 1 {
		return m.usageError("[PREFIX]")
	}
	prefix := ""
	if len(rest) == 1 {
		prefix = rest[0]
	}
	c, err := m.client()
	if err != nil {
		return m.fail("creating the API client", err)
	}
	vars, _, err := c.Variables().List(&api.QueryOptions{Prefix: prefix, Filter: *filter})
	if err != nil {
		return m.fail("listing variables", err)
	}
	if m.json {
		return m.printJSON(vars)
	}
	if len(vars) == 0 {
		fmt.Fprintln(m.stdout, "No variables found")
		return exitOK
	}
	rows := make([][]string, 0, len(vars))
	for _, v := range vars {
		rows = append(rows, []string{v.Namespace, v.Path, formatTime(v.ModifyTime)})
	}
	writeTable(m.stdout, []string{"Namespace", "Path", "Last Updated"}, rows)
	return exitOK
}

// varPurgeCommand is `troupe var purge [-namespace NS] PATH`.
func varPurgeCommand(args []string, stdout, stderr io.Writer) int {
	m := newMeta("var purge", stdout, stderr, false)
	setHelp(m, "var purge [options] PATH", "Deletes a variable.")
	path, c, code, ok := m.parseOne(args, "PATH")
	if !ok {
		return code
	}
	if _, err := c.Variables().Delete(path, nil); err != nil {
		return m.fail("purging the variable", err)
	}
	fmt.Fprintf(m.stdout, "Successfully purged variable %q\n", path)
	return exitOK
}

// keyringRotateCommand is `troupe operator root keyring rotate [-json]`.
func keyringRotateCommand(args []string, stdout, stderr io.Writer) int {
	m := newMeta("operator root keyring rotate", stdout, stderr, true)
	setHelp(m, "operator root keyring rotate [options]",
		"Makes a new active root key for variables; the old keys still decrypt what they encrypted.")
	c, code, ok := m.parseNone(args)
	if !ok {
		return code
	}
	key, _, err := c.Keyring().Rotate(nil)
	if err != nil {
		return m.fail("rotating the keyring", err)
	}
	if m.json {
		return m.printJSON(key)
	}
	writeTable(m.stdout, []string{"Key", "State", "Create Time"}, [][]string{{key.KeyID, key.State, formatTime(key.CreateTime)}})
	return exitOK
}
