package main

import (
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"

	"github.com/troupe-dev/troupe/jobspec"
	"github.com/troupe-dev/troupe/messages"
)

// volumeRegisterCommand is `troupe volume register FILE` (HCL or JSON).
func volumeRegisterCommand(args []string, stdout, stderr io.Writer) int {
	m := newMeta("volume register", stdout, stderr, false)
	path, c, code, ok := m.parseOne(args, "FILE")
	if !ok {
		return code
	}
	src, err := os.ReadFile(path)
	if err != nil {
		return m.fail("reading the volume file", err)
	}
	var vol *messages.CSIVolume
	if strings.HasSuffix(path, ".json") {
		vol, err = jobspec.ParseVolumeJSON(src)
	} else {
		vol, err = jobspec.ParseVolume(path, src)
	}
	if err != nil {
		return m.fail("parsing the volume file", err)
	}
	jobspec.CanonicalizeVolume(vol)
	if err := jobspec.ValidateVolume(vol, false); err != nil {
		return m.fail("validating the volume", err)
	}
	if _, err := c.Volumes().Register(vol, nil); err != nil {
		return m.fail("registering the volume", err)
	}
	fmt.Fprintf(m.stdout, "Volume %q registered\n", vol.GetID())
	return exitOK
}

// volumeStatusCommand is `troupe volume status [-json] [ID]`.
func volumeStatusCommand(args []string, stdout, stderr io.Writer) int {
	m := newMeta("volume status", stdout, stderr, true)
	rest, code, ok := m.parse(args)
	if !ok {
		return code
	}
	c, err := m.client()
	if err != nil {
		return m.fail("creating the API client", err)
	}
	if len(rest) == 0 {
		vols, _, err := c.Volumes().List(nil)
		if err != nil {
			return m.fail("listing volumes", err)
		}
		if m.json {
			return m.printJSON(vols)
		}
		rows := [][]string{}
		for _, v := range vols {
			rows = append(rows, []string{v.ID, v.Name, v.PluginID, strconv.FormatBool(v.Schedulable), orNone(v.AccessMode)})
		}
		writeTable(m.stdout, []string{"ID", "Name", "Plugin ID", "Schedulable", "Access Mode"}, rows)
		return exitOK
	}
	v, _, err := c.Volumes().Info(rest[0], nil)
	if err != nil {
		return m.fail("querying the volume", err)
	}
	if m.json {
		return m.printJSON(v)
	}
	writeKV(m.stdout, []kv{{"ID", v.ID}, {"Name", v.Name}, {"External ID", v.ExternalID}, {"Plugin ID", v.PluginID},
		{"Provider", orNone(v.Provider)}, {"Schedulable", strconv.FormatBool(v.Schedulable)},
		{"Controllers Healthy", fmt.Sprintf("%d/%d", v.ControllersHealthy, v.ControllersExpected)},
		{"Nodes Healthy", fmt.Sprintf("%d/%d", v.NodesHealthy, v.NodesExpected)},
		{"Access Mode", orNone(v.AccessMode)}, {"Attachment Mode", orNone(v.AttachmentMode)},
		{"Namespace", v.Namespace}})
	fmt.Fprintln(m.stdout, "\nClaims")
	rows := [][]string{}
	for _, cl := range v.Claims {
		rows = append(rows, []string{shortID(cl.AllocationID), shortID(cl.NodeID), cl.Mode, cl.State})
	}
	writeTable(m.stdout, []string{"Alloc ID", "Node ID", "Mode", "State"}, rows)
	return exitOK
}

// volumeDeregisterCommand is `troupe volume deregister [-force] ID`.
func volumeDeregisterCommand(args []string, stdout, stderr io.Writer) int {
	m := newMeta("volume deregister", stdout, stderr, false)
	force := m.fs.Bool("force", false, "deregister even with claims that are being released")
	id, c, code, ok := m.parseOne(args, "[-force] ID")
	if !ok {
		return code
	}
	if err := c.Volumes().Deregister(id, *force, nil); err != nil {
		return m.fail("deregistering the volume", err)
	}
	fmt.Fprintf(m.stdout, "Volume %q deregistered\n", id)
	return exitOK
}

// pluginStatusCommand is `troupe plugin status [-json] [ID]`.
func pluginStatusCommand(args []string, stdout, stderr io.Writer) int {
	m := newMeta("plugin status", stdout, stderr, true)
	rest, code, ok := m.parse(args)
	if !ok {
		return code
	}
	c, err := m.client()
	if err != nil {
		return m.fail("creating the API client", err)
	}
	if len(rest) == 0 {
		ps, _, err := c.Plugins().List(nil)
		if err != nil {
			return m.fail("listing plugins", err)
		}
		if m.json {
			return m.printJSON(ps)
		}
		rows := [][]string{}
		for _, p := range ps {
			rows = append(rows, []string{p.ID, orNone(p.Provider), fmt.Sprintf("%d/%d", p.ControllersHealthy, p.ControllersExpected),
				fmt.Sprintf("%d/%d", p.NodesHealthy, p.NodesExpected)})
		}
		writeTable(m.stdout, []string{"ID", "Provider", "Controllers Healthy/Expected", "Nodes Healthy/Expected"}, rows)
		return exitOK
	}
	p, _, err := c.Plugins().Info(rest[0], nil)
	if err != nil {
		return m.fail("querying the plugin", err)
	}
	if m.json {
		return m.printJSON(p)
	}
	writeKV(m.stdout, []kv{{"ID", p.ID}, {"Provider", orNone(p.Provider)}, {"Version", orNone(p.Version)},
		{"Controllers Healthy", fmt.Sprintf("%d", p.ControllersHealthy)}, {"Controllers Expected", fmt.Sprintf("%d", p.ControllersExpected)},
		{"Nodes Healthy", fmt.Sprintf("%d", p.NodesHealthy)}, {"Nodes Expected", fmt.Sprintf("%d", p.NodesExpected)}})
	fmt.Fprintln(m.stdout, "\nInstances")
	rows := [][]string{}
	for node, in := range p.Controllers {
		rows = append(rows, []string{shortID(node), "controller", strconv.FormatBool(in.Healthy), orNone(in.HealthDescription)})
	}
	for node, in := range p.Nodes {
		rows = append(rows, []string{shortID(node), "node", strconv.FormatBool(in.Healthy), orNone(in.HealthDescription)})
	}
	writeTable(m.stdout, []string{"Node ID", "Type", "Healthy", "Description"}, rows)
	return exitOK
}
