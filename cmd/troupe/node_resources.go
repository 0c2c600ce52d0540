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

// writeAllocUsage writes what the node's running allocations use of its
// CPU and memory, summed from each one's stats (as Nomad's "Allocation
// Resource Utilization": CPU ticks in MHz, memory RSS). An allocation
// whose stats cannot be read counts as nothing; the error is returned.
func writeAllocUsage(w io.Writer, c *api.Client, n *messages.Node, allocs []*messages.Allocation) error {
	var cpu float64
	var mem uint64
	var firstErr error
	for _, a := range allocs {
		if a.GetClientStatus() != "running" || a.TerminalStatus() {
			continue
		}
		u, err := c.Allocations().Stats(a.GetID(), nil)
		if err != nil {
			if firstErr == nil {
				firstErr = err
			}
			continue
		}
		ru := u.ResourceUsage
		if ru == nil {
			continue
		}
		if ru.CpuStats != nil {
			cpu += ru.CpuStats.TotalTicks
		}
		if ms := ru.MemoryStats; ms != nil {
			if ms.RSS > 0 {
				mem += ms.RSS
			} else {
				mem += ms.Usage
			}
		}
	}
	res := n.GetNodeResources()
	fmt.Fprintln(w, "\nAllocation Resource Utilization")
	writeTable(w, []string{"CPU", "Memory"}, [][]string{{
		fmt.Sprintf("%.0f/%d MHz", cpu, res.GetCpu().GetCpuShares()),
		fmt.Sprintf("%d/%d MiB", mem>>20, res.GetMemory().GetMemoryMB()),
	}})
	return firstErr
}

// writeHostStats writes a node's sampled usage: CPU (MHz used of the
// node's), memory used of total, the allocation directory's disk used of
// its size, and uptime; then each core's, each disk's and each device
// instance's figures (a GPU's memory used of total); with verbose, every
// statistic of every instance.
func writeHostStats(w io.Writer, n *messages.Node, hs *api.HostStats, verbose bool) {
	fmt.Fprintln(w, "\nHost Resource Utilization")
	mem := hs.Memory
	disk := "<none>"
	if d := hs.AllocDirStats; d != nil {
		disk = fmt.Sprintf("%d/%d MiB", d.Used>>20, d.Size>>20)
	}
	writeTable(w, []string{"CPU", "Memory", "Disk", "Uptime"}, [][]string{{
		fmt.Sprintf("%.0f/%d MHz", hs.CPUTicksConsumed, n.GetNodeResources().GetCpu().GetCpuShares()),
		fmt.Sprintf("%d/%d MiB", mem.GetUsed()>>20, mem.GetTotal()>>20),
		disk,
		(time.Duration(hs.Uptime) * time.Second).String(),
	}})
	if len(hs.CPU) > 0 {
		fmt.Fprintln(w, "\nCPU Stats")
		rows := make([][]string, 0, len(hs.CPU))
		for _, c := range hs.CPU {
			rows = append(rows, []string{c.CPU, pct(c.User), pct(c.System), pct(c.Idle)})
		}
		writeTable(w, []string{"CPU", "User", "System", "Idle"}, rows)
	}
	if len(hs.DiskStats) > 0 {
		fmt.Fprintln(w, "\nDisk Stats")
		rows := make([][]string, 0, len(hs.DiskStats))
		for _, d := range hs.DiskStats {
			rows = append(rows, []string{d.Device, d.Mountpoint, fmt.Sprintf("%d MiB", d.Size>>20),
				fmt.Sprintf("%d MiB", d.Used>>20), fmt.Sprintf("%d MiB", d.Available>>20),
				pct(d.UsedPercent), pct(d.InodesUsedPercent)})
		}
		writeTable(w, []string{"Device", "Mountpoint", "Size", "Used", "Available", "Used Percent", "Inodes Percent"}, rows)
	}
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

// pct shows a percentage with two decimals ("1.25%").
func pct(v float64) string { return strconv.FormatFloat(v, 'f', 2, 64) + "%" }

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
