package main

import (
	"fmt"
	"io"
	"sort"
	"strconv"
	"strings"

	"github.com/troupe-dev/troupe/api"
	"github.com/troupe-dev/troupe/messages"
)

// nodeStatusCommand is `troupe node status [-json] [-verbose] [ID]`.
func nodeStatusCommand(args []string, stdout, stderr io.Writer) int {
	m := newMeta("node status", stdout, stderr, true)
	verbose := m.fs.Bool("verbose", false, "show full IDs and the node's attributes")
	stats := m.fs.Bool("stats", false, "show the host's memory and each device's usage, sampled now")
	filter := filterFlag(m, "nodes")
	rest, code, ok := m.parse(args)
	if !ok {
		return code
	}
	if len(rest) > 1 {
		return m.usageError("[ID]")
	}
	c, err := m.client()
	if err != nil {
		return m.fail("creating the API client", err)
	}
	if len(rest) == 0 {
		return nodeList(m, c, *verbose, *filter)
	}
	node, err := lookupNode(c, rest[0])
	if err != nil {
		return m.fail("querying node", err)
	}
	if m.json {
		return m.printJSON(node)
	}
	return nodeDetail(m, c, node, *verbose, *stats)
}

func nodeList(m *meta, c *api.Client, verbose bool, filter string) int {
	nodes, _, err := c.Nodes().List(&api.QueryOptions{Filter: filter})
	if err != nil {
		return m.fail("querying nodes", err)
	}
	return printNodes(m, nodes, verbose)
}

// printNodes writes a node list (or its JSON).
func printNodes(m *meta, nodes []*api.NodeListStub, verbose bool) int {
	if m.json {
		return m.printJSON(nodes)
	}
	if len(nodes) == 0 {
		fmt.Fprintln(m.stdout, "No nodes registered")
		return exitOK
	}
	sort.Slice(nodes, func(i, j int) bool { return nodes[i].ID < nodes[j].ID })
	rows := make([][]string, 0, len(nodes))
	for _, n := range nodes {
		rows = append(rows, []string{idOrShort(n.ID, verbose), orNone(n.NodePool), n.Datacenter, n.Name,
			orNone(n.NodeClass), strconv.FormatBool(n.Drain), n.SchedulingEligibility, n.Status})
	}
	writeTable(m.stdout, []string{"ID", "Node Pool", "DC", "Name", "Class", "Drain", "Eligibility", "Status"}, rows)
	return exitOK
}

func nodeDetail(m *meta, c *api.Client, n *messages.Node, verbose, stats bool) int {
	writeKV(m.stdout, []kv{
		{"ID", n.ID},
		{"Name", n.Name},
		{"Node Pool", orNone(n.NodePool)},
		{"Class", orNone(n.NodeClass)},
		{"DC", n.Datacenter},
		{"Drain", strconv.FormatBool(n.Drain)},
		{"Eligibility", n.SchedulingEligibility},
		{"Status", n.Status},
		{"Drivers", orNone(strings.Join(healthyDrivers(n.Drivers), ","))},
	})
	writeDrivers(m.stdout, n)
	if verbose {
		writeHostVolumes(m.stdout, n)
	}
	fmt.Fprintln(m.stdout, "\nNode Resources")
	res := n.GetNodeResources()
	writeTable(m.stdout, []string{"CPU", "Cores", "Memory", "Disk"}, [][]string{{
		fmt.Sprintf("%d MHz", res.GetCpu().GetCpuShares()),
		strconv.Itoa(int(res.GetCpu().GetTotalCpuCores())),
		fmt.Sprintf("%d MiB", res.GetMemory().GetMemoryMB()),
		fmt.Sprintf("%d MiB", res.GetDisk().GetDiskMB()),
	}})
	allocs, _, err := c.Nodes().Allocations(n.ID, nil)
	if err != nil {
		return m.fail("querying the node's allocations", err)
	}
	writeAllocatedResources(m.stdout, n, allocs)
	writeDevices(m.stdout, n, allocs, verbose)
	code := exitOK
	if stats {
		// A node whose agent cannot be asked (down, unreachable) still
		// gets the rest of its status; the exit code says what is missing.
		if err := writeAllocUsage(m.stdout, c, n, allocs); err != nil {
			code = m.fail("querying an allocation's stats", err)
		}
		if hs, err := c.Nodes().Stats(n.ID, nil); err != nil {
			code = m.fail("querying the node's stats", err)
		} else {
			writeHostStats(m.stdout, n, hs, verbose)
		}
	}
	stubs := make([]*api.AllocListStub, 0, len(allocs))
	for _, a := range allocs {
		stubs = append(stubs, api.NewAllocListStub(a))
	}
	fmt.Fprintln(m.stdout, "\nAllocations")
	writeAllocTable(m.stdout, stubs, verbose)
	if verbose {
		fmt.Fprintln(m.stdout, "\nAttributes")
		pairs := make([]kv, 0, len(n.Attributes))
		for _, k := range sortedKeys(n.Attributes) {
			pairs = append(pairs, kv{k, n.Attributes[k]})
		}
		writeKV(m.stdout, pairs)
	}
	return code
}

// writeDrivers writes every driver the node fingerprinted: whether it
// was detected, its health and why, and its version when it reports one.
func writeDrivers(w io.Writer, n *messages.Node) {
	if len(n.GetDrivers()) == 0 {
		return
	}
	rows := make([][]string, 0, len(n.GetDrivers()))
	for _, name := range sortedKeys(n.GetDrivers()) {
		d := n.GetDrivers()[name]
		rows = append(rows, []string{name, strconv.FormatBool(d.GetDetected()), strconv.FormatBool(d.GetHealthy()),
			orNone(n.GetAttributes()["driver."+name+".version"]), orNone(d.GetHealthDescription())})
	}
	fmt.Fprintln(w, "\nDriver Status")
	writeTable(w, []string{"Driver", "Detected", "Healthy", "Version", "Description"}, rows)
}

// writeHostVolumes writes the node's host volumes as Nomad's verbose node
// status does: name, read-only, path.
func writeHostVolumes(w io.Writer, n *messages.Node) {
	if len(n.GetHostVolumes()) == 0 {
		return
	}
	rows := make([][]string, 0, len(n.GetHostVolumes()))
	for _, name := range sortedKeys(n.GetHostVolumes()) {
		v := n.GetHostVolumes()[name]
		rows = append(rows, []string{name, strconv.FormatBool(v.GetReadOnly()), v.GetPath()})
	}
	fmt.Fprintln(w, "\nHost Volumes")
	writeTable(w, []string{"Name", "ReadOnly", "Source"}, rows)
}

// healthyDrivers names the detected, healthy drivers, sorted.
func healthyDrivers(drivers map[string]*messages.DriverInfo) []string {
	var out []string
	for _, name := range sortedKeys(drivers) {
		if d := drivers[name]; d.GetDetected() && d.GetHealthy() {
			out = append(out, name)
		}
	}
	return out
}

// nodeEligibilityCommand is `troupe node eligibility -enable|-disable ID`.
func nodeEligibilityCommand(args []string, stdout, stderr io.Writer) int {
	m := newMeta("node eligibility", stdout, stderr, false)
	enable := m.fs.Bool("enable", false, "mark the node eligible for scheduling")
	disable := m.fs.Bool("disable", false, "mark the node ineligible for scheduling")
	rest, code, ok := m.parse(args)
	if !ok {
		return code
	}
	if len(rest) != 1 || *enable == *disable {
		return m.usageError("-enable|-disable ID")
	}
	c, err := m.client()
	if err != nil {
		return m.fail("creating the API client", err)
	}
	node, err := lookupNode(c, rest[0])
	if err != nil {
		return m.fail("querying node", err)
	}
	if _, err := c.Nodes().ToggleEligibility(node.ID, *enable, nil); err != nil {
		return m.fail("updating scheduling eligibility", err)
	}
	word := messages.NodeSchedulingEligible
	if *disable {
		word = messages.NodeSchedulingIneligible
	}
	fmt.Fprintf(m.stdout, "Node %q scheduling eligibility set: %s for scheduling\n", node.ID, word)
	return exitOK
}
