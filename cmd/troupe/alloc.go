package main

import (
	"fmt"
	"io"
	"strconv"
	"strings"

	"github.com/troupe-dev/troupe/api"
	"github.com/troupe-dev/troupe/messages"
)

// allocStatusCommand is `troupe alloc status [-json] [-verbose] [-stats] ID`.
func allocStatusCommand(args []string, stdout, stderr io.Writer) int {
	m := newMeta("alloc status", stdout, stderr, true)
	verbose := m.fs.Bool("verbose", false, "show full IDs")
	stats := m.fs.Bool("stats", false, "show the tasks' CPU and memory use")
	id, c, code, ok := m.parseOne(args, "ID")
	if !ok {
		return code
	}
	alloc, err := lookupAlloc(c, id)
	if err != nil {
		return m.fail("querying allocation", err)
	}
	if m.json {
		return m.printJSON(alloc)
	}
	var usage *api.AllocResourceUsage
	if *stats && alloc.GetClientStatus() == messages.AllocClientStatusRunning {
		if usage, err = c.Allocations().Stats(alloc.GetID(), nil); err != nil {
			fmt.Fprintf(m.stderr, "Couldn't retrieve stats: %v\n", err)
		}
	}
	writeAllocHeader(m.stdout, alloc, *verbose)
	writeAllocNetwork(m.stdout, alloc)
	writeVolumeStates(m.stdout, alloc)
	for _, task := range allocTasks(alloc) {
		writeTaskStatus(m.stdout, alloc, task)
		if usage != nil {
			writeTaskUsage(m.stdout, alloc, task, usage.Tasks[task])
		}
	}
	return exitOK
}

func writeAllocHeader(w io.Writer, a *messages.Allocation, verbose bool) {
	writeKV(w, []kv{
		{"ID", a.ID},
		{"Eval ID", idOrShort(a.EvalID, verbose)},
		{"Name", a.Name},
		{"Node ID", idOrShort(a.NodeID, verbose)},
		{"Node Name", a.NodeName},
		{"Job ID", a.JobID},
		{"Job Version", strconv.FormatUint(a.JobVersion, 10)},
		{"Client Status", a.ClientStatus},
		{"Client Description", orNone(a.ClientDescription)},
		{"Desired Status", a.DesiredStatus},
		{"Desired Description", orNone(a.DesiredDescription)},
		{"Created", timeAgo(a.CreateTime)},
		{"Modified", timeAgo(a.ModifyTime)},
	})
}

// writeTaskStatus writes one task's state, resources and recent events.
func writeTaskStatus(w io.Writer, a *messages.Allocation, task string) {
	st := a.TaskStates[task]
	state := st.GetState()
	if state == "" {
		state = messages.TaskStatePending
	}
	fmt.Fprintf(w, "\nTask %q is %q\n", task, state)
	if res := a.GetAllocatedResources().GetTasks()[task]; res != nil {
		fmt.Fprintln(w, "Task Resources:")
		writeTable(w, []string{"CPU", "Memory"}, [][]string{{
			fmt.Sprintf("%d MHz", res.GetCpu().GetCpuShares()),
			fmt.Sprintf("%d MiB", res.GetMemory().GetMemoryMB()),
		}})
		if devs := res.GetDevices(); len(devs) > 0 {
			rows := make([][]string, 0, len(devs))
			for _, d := range devs {
				rows = append(rows, []string{d.GetVendor() + "/" + d.GetType() + "/" + d.GetName(), strings.Join(d.GetDeviceIDs(), ",")})
			}
			fmt.Fprintln(w, "Task Devices:")
			writeTable(w, []string{"Device Group", "Instance IDs"}, rows)
		}
	}
	if len(st.GetEvents()) == 0 {
		return
	}
	fmt.Fprintln(w, "\nRecent Events:")
	writeEvents(w, "", lastEvents(st.GetEvents(), 10), true)
}

// writeAllocNetwork writes the allocation's address on its network and
// its ports: label, host port (static or dynamic), the port inside the
// allocation, and where it is reachable from the host.
func writeAllocNetwork(w io.Writer, a *messages.Allocation) {
	nets := a.GetAllocatedResources().GetShared().GetNetworks()
	addr := a.GetNetworkStatus().GetAddress()
	if len(nets) == 0 && addr == "" {
		return
	}
	fmt.Fprintln(w, "\nNetwork:")
	mode := "host"
	if len(nets) > 0 && nets[0].GetMode() != "" {
		mode = nets[0].GetMode()
	}
	writeKV(w, []kv{{"Mode", mode}, {"Address", orNone(addr)}, {"Interface", orNone(a.GetNetworkStatus().GetInterfaceName())}})
	var rows [][]string
	for _, n := range nets {
		for _, p := range n.GetReservedPorts() {
			rows = append(rows, portRow(n, p, false))
		}
		for _, p := range n.GetDynamicPorts() {
			rows = append(rows, portRow(n, p, true))
		}
	}
	if len(rows) > 0 {
		fmt.Fprintln(w, "\nAllocation Addresses:")
		writeTable(w, []string{"Label", "Dynamic", "Host Port", "To", "Address"}, rows)
	}
}

func portRow(n *messages.NetworkResource, p *messages.Port, dynamic bool) []string {
	to := p.GetTo()
	if to <= 0 {
		to = p.GetValue()
	}
	host := n.GetIP()
	if host == "" {
		host = "<host>"
	}
	return []string{p.GetLabel(), strconv.FormatBool(dynamic), strconv.Itoa(int(p.GetValue())), strconv.Itoa(int(to)),
		fmt.Sprintf("%s:%d", host, p.GetValue())}
}

// writeVolumeStates writes the allocation's CSI volumes as its client
// sees them, one line each, then each volume's recent events, newest
// first. It writes nothing for an allocation without CSI volumes.
func writeVolumeStates(w io.Writer, a *messages.Allocation) {
	if len(a.GetVolumeStates()) == 0 {
		return
	}
	names := sortedKeys(a.GetVolumeStates())
	rows := make([][]string, 0, len(names))
	for _, name := range names {
		vs := a.VolumeStates[name]
		rows = append(rows, []string{name, vs.GetVolumeID(), vs.GetPluginID(), orNone(vs.GetState()),
			orNone(vs.GetTargetPath()), strconv.Itoa(int(vs.GetAttempts()))})
	}
	fmt.Fprintln(w, "\nCSI Volumes:")
	writeTable(w, []string{"Name", "Volume ID", "Plugin ID", "State", "Target", "Failed Attempts"}, rows)
	for _, name := range names {
		events := a.VolumeStates[name].GetEvents()
		if len(events) == 0 {
			continue
		}
		fmt.Fprintf(w, "\nVolume %q Recent Events:\n", name)
		writeEvents(w, "", lastEvents(events, 10), true)
	}
}

// allocTasks names the allocation's tasks: from its job's group, its task
// states and its allocated resources, sorted.
func allocTasks(a *messages.Allocation) []string {
	set := map[string]bool{}
	for _, tg := range a.GetJob().GetTaskGroups() {
		if tg.GetName() != a.TaskGroup {
			continue
		}
		for _, t := range tg.GetTasks() {
			set[t.GetName()] = true
		}
	}
	for name := range a.TaskStates {
		set[name] = true
	}
	for name := range a.GetAllocatedResources().GetTasks() {
		set[name] = true
	}
	return sortedKeys(set)
}

// allocStopCommand is `troupe alloc stop [-detach] ID`.
func allocStopCommand(args []string, stdout, stderr io.Writer) int {
	m := newMeta("alloc stop", stdout, stderr, false)
	detach := m.fs.Bool("detach", false, "print the evaluation ID and exit without monitoring")
	timeout := m.fs.Duration("timeout", defaultMonitorTimeout, "give up monitoring after this long")
	id, c, code, ok := m.parseOne(args, "ID")
	if !ok {
		return code
	}
	alloc, err := lookupAlloc(c, id)
	if err != nil {
		return m.fail("querying allocation", err)
	}
	resp, err := c.Allocations().Stop(alloc.ID, nil)
	if err != nil {
		return m.fail("stopping allocation", err)
	}
	return followEval(m, c, resp.EvalID, *detach, *timeout, false, "Allocation stop successful")
}
