package main

import (
	"fmt"
	"io"
	"strconv"
	"time"

	"github.com/troupe-dev/troupe/api"
	"github.com/troupe-dev/troupe/cluster/state"
	"github.com/troupe-dev/troupe/messages"
	"github.com/troupe-dev/troupe/runtime/device"
)

// writeAllocatedResources writes what the node's live allocations (those
// the scheduler still counts: not stopped, not finished) hold of its CPU,
// memory and disk, against what it has.
func writeAllocatedResources(w io.Writer, n *messages.Node, allocs []*messages.Allocation) {
	var cpu, mem, disk int64
	for _, a := range allocs {
		if a.TerminalStatus() {
			continue
		}
		c, m, d := state.AllocResources(a)
		cpu, mem, disk = cpu+c, mem+m, disk+d
	}
	res := n.GetNodeResources()
	fmt.Fprintln(w, "\nAllocated Resources")
	writeTable(w, []string{"CPU", "Memory", "Disk"}, [][]string{{
		fmt.Sprintf("%d/%d MHz", cpu, res.GetCpu().GetCpuShares()),
		fmt.Sprintf("%d/%d MiB", mem, res.GetMemory().GetMemoryMB()),
		fmt.Sprintf("%d/%d MiB", disk, res.GetDisk().GetDiskMB()),
	}})
}

// deviceHolders maps each device instance ID that a live allocation holds
// to that allocation's ID.
func deviceHolders(allocs []*messages.Allocation) map[string]string {
	out := map[string]string{}
	for _, a := range allocs {
		if a.TerminalStatus() {
			continue
		}
		for _, t := range a.GetAllocatedResources().GetTasks() {
			for _, d := range t.GetDevices() {
				for _, id := range d.GetDeviceIDs() {
					out[id] = a.GetID()
				}
			}
		}
	}
	return out
}

// writeDevices writes the node's device groups (vendor/type/name) with
// their healthy, allocated and total instance counts; with verbose, every
// instance (ID, health, the allocation holding it, why, PCI bus) and each
// group's attributes.
func writeDevices(w io.Writer, n *messages.Node, allocs []*messages.Allocation, verbose bool) {
	groups := n.GetNodeResources().GetDevices()
	if len(groups) == 0 {
		return
	}
	holders := deviceHolders(allocs)
	rows := make([][]string, 0, len(groups))
	for _, g := range groups {
		healthy, used := 0, 0
		for _, in := range g.GetInstances() {
			if in.GetHealthy() {
				healthy++
			}
			if holders[in.GetID()] != "" {
				used++
			}
		}
		total := len(g.GetInstances())
		rows = append(rows, []string{device.GroupID(g), fmt.Sprintf("%d/%d", healthy, total), fmt.Sprintf("%d/%d", used, total)})
	}
	fmt.Fprintln(w, "\nDevice Resources")
	writeTable(w, []string{"Device Group", "Healthy", "Allocated"}, rows)
	if !verbose {
		return
	}
	for _, g := range groups {
		fmt.Fprintf(w, "\nDevice Group %q\n", device.GroupID(g))
		irows := make([][]string, 0, len(g.GetInstances()))
		for _, in := range g.GetInstances() {
			irows = append(irows, []string{in.GetID(), strconv.FormatBool(in.GetHealthy()), orNone(holders[in.GetID()]),
				orNone(in.GetLocality()["pci_bus_id"]), orNone(in.GetHealthDescription())})
		}
		writeTable(w, []string{"ID", "Healthy", "Allocation", "PCI Bus ID", "Description"}, irows)
		if len(g.GetAttributes()) > 0 {
			fmt.Fprintln(w, "Attributes")
			pairs := make([]kv, 0, len(g.GetAttributes()))
			for _, k := range sortedKeys(g.GetAttributes()) {
				pairs = append(pairs, kv{k, g.GetAttributes()[k]})
			}
			writeKV(w, pairs)
		}
	}
}

// writeHostStats writes a node's sampled usage: memory used of total and
// uptime, then each device instance's summary (a GPU's memory used of
// total); with verbose, every statistic of every instance.
func writeHostStats(w io.Writer, hs *api.HostStats, verbose bool) {
	fmt.Fprintln(w, "\nHost Resource Utilization")
	mem := hs.Memory
	writeTable(w, []string{"Memory", "Uptime"}, [][]string{{
		fmt.Sprintf("%d/%d MiB", mem.GetUsed()>>20, mem.GetTotal()>>20),
		(time.Duration(hs.Uptime) * time.Second).String(),
	}})
	var rows [][]string
	var detail []kv
	for _, g := range hs.DeviceStats {
		for _, id := range sortedKeys(g.InstanceStats) {
			ds := g.InstanceStats[id]
			name := fmt.Sprintf("%s/%s/%s[%s]", g.Vendor, g.Type, g.Name, id)
			rows = append(rows, []string{name, statString(ds.Summary)})
			if ds.Stats == nil {
				continue
			}
			for _, k := range sortedKeys(ds.Stats.Attributes) {
				detail = append(detail, kv{name + " " + k, statString(ds.Stats.Attributes[k])})
			}
		}
	}
	if len(rows) == 0 {
		return
	}
	fmt.Fprintln(w, "\nDevice Resource Utilization")
	writeTable(w, []string{"Device", "Summary"}, rows)
	if verbose && len(detail) > 0 {
		fmt.Fprintln(w, "\nDevice Stats")
		writeKV(w, detail)
	}
}

// statString shows a value ("17 %") or a fraction ("1024 / 81559 MiB").
func statString(v *api.StatValue) string {
	if v == nil || v.FloatNumeratorVal == nil {
		return "<none>"
	}
	s := strconv.FormatFloat(*v.FloatNumeratorVal, 'f', -1, 64)
	if v.FloatDenominatorVal != nil {
		s += " / " + strconv.FormatFloat(*v.FloatDenominatorVal, 'f', -1, 64)
	}
	if v.Unit != "" {
		s += " " + v.Unit
	}
	return s
}
