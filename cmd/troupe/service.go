package main

import (
	"fmt"
	"io"
	"net"
	"strconv"
	"strings"
)

// serviceCommands are `troupe service <sub>`: Nomad's native service
// registrations.
func serviceCommands() *cmdNode {
	return &cmdNode{synopsis: "List, inspect and delete service registrations", subs: map[string]*cmdNode{
		"list":   {synopsis: "List the registered services", run: serviceListCommand},
		"info":   {synopsis: "Show a service's registrations", run: serviceInfoCommand},
		"delete": {synopsis: "Delete one service registration", run: serviceDeleteCommand},
	}}
}

// serviceListCommand is `troupe service list [-json] [-namespace NS|*]`.
func serviceListCommand(args []string, stdout, stderr io.Writer) int {
	m := newMeta("service list", stdout, stderr, true)
	setHelp(m, "service list [options]", `Lists the services registered in the namespace (-namespace "*": in every
  namespace), with their tags.`)
	c, code, ok := m.parseNone(args)
	if !ok {
		return code
	}
	list, _, err := c.Services().List(nil)
	if err != nil {
		return m.fail("listing services", err)
	}
	if m.json {
		return m.printJSON(list)
	}
	every := c.Namespace() == "*"
	var rows [][]string
	for _, ns := range list {
		for _, s := range ns.Services {
			row := []string{s.ServiceName, "[" + strings.Join(s.Tags, ",") + "]"}
			if every {
				row = append([]string{ns.Namespace}, row...)
			}
			rows = append(rows, row)
		}
	}
	if len(rows) == 0 {
		fmt.Fprintln(m.stdout, "No service registrations found")
		return exitOK
	}
	header := []string{"Service Name", "Tags"}
	if every {
		header = append([]string{"Namespace"}, header...)
	}
	writeTable(m.stdout, header, rows)
	return exitOK
}

// serviceInfoCommand is `troupe service info [-json] [-verbose] NAME`.
func serviceInfoCommand(args []string, stdout, stderr io.Writer) int {
	m := newMeta("service info", stdout, stderr, true)
	setHelp(m, "service info [options] NAME", "Shows the registrations of a service: where each instance listens.")
	verbose := m.fs.Bool("verbose", false, "full IDs")
	name, c, code, ok := m.parseOne(args, "NAME")
	if !ok {
		return code
	}
	regs, _, err := c.Services().Get(name, nil)
	if err != nil {
		return m.fail("querying the service", err)
	}
	if m.json {
		return m.printJSON(regs)
	}
	if len(regs) == 0 {
		fmt.Fprintf(m.stdout, "No service registrations found for %q\n", name)
		return exitOK
	}
	id := shortID
	if *verbose {
		id = func(s string) string { return s }
	}
	rows := make([][]string, 0, len(regs))
	for _, r := range regs {
		row := []string{r.JobID, net.JoinHostPort(r.Address, strconv.Itoa(int(r.Port))),
			"[" + strings.Join(r.Tags, ",") + "]", id(r.NodeID), id(r.AllocID)}
		if *verbose {
			row = append([]string{r.ID}, row...)
		}
		rows = append(rows, row)
	}
	header := []string{"Job ID", "Address", "Tags", "Node ID", "Alloc ID"}
	if *verbose {
		header = append([]string{"ID"}, header...)
	}
	writeTable(m.stdout, header, rows)
	return exitOK
}

// serviceDeleteCommand is `troupe service delete NAME ID`.
func serviceDeleteCommand(args []string, stdout, stderr io.Writer) int {
	m := newMeta("service delete", stdout, stderr, false)
	setHelp(m, "service delete [options] NAME ID", `Deletes one registration of a service. A running allocation registers
  its services again when its client restarts.`)
	rest, c, code, ok := m.parseN(args, 2, "NAME ID")
	if !ok {
		return code
	}
	if _, err := c.Services().Delete(rest[0], rest[1], nil); err != nil {
		return m.fail("deleting the service registration", err)
	}
	fmt.Fprintln(m.stdout, "Successfully deleted service registration")
	return exitOK
}
