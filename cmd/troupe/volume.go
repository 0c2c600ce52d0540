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
	setHelp(m, "volume register [options] FILE", `Registers an existing storage volume, already made in its storage
  provider and named by external_id, from a specification file (HCL, or
  JSON when the name ends in .json).`)
	path, c, code, ok := m.parseOne(args, "FILE")
	if !ok {
		return code
	}
	vol, code, ok := readVolumeFile(m, path, false)
	if !ok {
		return code
	}
	if _, err := c.Volumes().Register(vol, nil); err != nil {
		return m.fail("registering the volume", err)
	}
	fmt.Fprintf(m.stdout, "Volume %q registered\n", vol.GetID())
	return exitOK
}

// volumeCreateCommand is `troupe volume create FILE` (HCL or JSON).
func volumeCreateCommand(args []string, stdout, stderr io.Writer) int {
	m := newMeta("volume create", stdout, stderr, false)
	setHelp(m, "volume create [options] FILE", `Has the volume's CSI plugin create a storage volume in its storage
  provider, from a specification file (HCL, or JSON when the name ends in
  .json), and registers it. external_id is not needed: the plugin makes one.`)
	path, c, code, ok := m.parseOne(args, "FILE")
	if !ok {
		return code
	}
	vol, code, ok := readVolumeFile(m, path, true)
	if !ok {
		return code
	}
	created, _, err := c.Volumes().Create(vol, nil)
	if err != nil {
		return m.fail("creating the volume", err)
	}
	for _, v := range created {
		fmt.Fprintf(m.stdout, "Created external volume %s with ID %s\n", v.GetExternalID(), v.GetID())
	}
	return exitOK
}

// readVolumeFile parses, canonicalizes and validates a volume file by the
// rules of register or create. When ok is false the command returns code.
func readVolumeFile(m *meta, path string, create bool) (vol *messages.CSIVolume, code int, ok bool) {
	src, err := os.ReadFile(path)
	if err != nil {
		return nil, m.fail("reading the volume file", err), false
	}
	if strings.HasSuffix(path, ".json") {
		vol, err = jobspec.ParseVolumeJSON(src)
	} else {
		vol, err = jobspec.ParseVolume(path, src)
	}
	if err != nil {
		return nil, m.fail("parsing the volume file", err), false
	}
	jobspec.CanonicalizeVolume(vol)
	if err := jobspec.ValidateVolume(vol, create); err != nil {
		return nil, m.fail("validating the volume", err), false
	}
	return vol, 0, true
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
	if len(rows) == 0 {
		fmt.Fprintln(m.stdout, "No claims")
		return exitOK
	}
	writeTable(m.stdout, []string{"Alloc ID", "Node ID", "Mode", "State"}, rows)
	return exitOK
}

// volumeDeregisterCommand is `troupe volume deregister [-force] ID`.
func volumeDeregisterCommand(args []string, stdout, stderr io.Writer) int {
	m := newMeta("volume deregister", stdout, stderr, false)
	setHelp(m, "volume deregister [options] ID", `Removes a volume from troupe. The storage volume itself is left in its
  provider (see volume delete).`)
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

// volumeDetachCommand is `troupe volume detach VOLUME NODE`.
func volumeDetachCommand(args []string, stdout, stderr io.Writer) int {
	m := newMeta("volume detach", stdout, stderr, false)
	setHelp(m, "volume detach [options] VOLUME NODE", `Releases the volume's claims on a node: unmounts it there, then has the
  controller plugin detach it, so that a volume held by a lost node or a
  stuck allocation can be used elsewhere. NODE is a node ID or a unique
  prefix of one.`)
	rest, code, ok := m.parse(args)
	if !ok {
		return code
	}
	if len(rest) != 2 {
		return m.usageError("VOLUME NODE")
	}
	c, err := m.client()
	if err != nil {
		return m.fail("creating the API client", err)
	}
	node, err := lookupNode(c, rest[1])
	if err != nil {
		return m.fail("querying node", err)
	}
	if err := c.Volumes().Detach(rest[0], node.ID, nil); err != nil {
		return m.fail("detaching the volume", err)
	}
	fmt.Fprintf(m.stdout, "Volume %q detached from node %q\n", rest[0], node.ID)
	return exitOK
}

// volumeDeleteCommand is `troupe volume delete [-secret k=v ...] ID`.
func volumeDeleteCommand(args []string, stdout, stderr io.Writer) int {
	m := newMeta("volume delete", stdout, stderr, false)
	setHelp(m, "volume delete [options] ID", `Has the volume's CSI plugin delete the storage volume in its provider,
  then deregisters it. The volume must have no claims.`)
	secrets := secretFlag{}
	m.fs.Var(secrets, "secret", "a secret `key=value` for the plugin, added to the volume's own (repeatable)")
	id, c, code, ok := m.parseOne(args, "[-secret key=value ...] ID")
	if !ok {
		return code
	}
	if err := c.Volumes().Delete(id, secrets, nil); err != nil {
		return m.fail("deleting the volume", err)
	}
	fmt.Fprintf(m.stdout, "Successfully deleted volume %q!\n", id)
	return exitOK
}

// secretFlag collects repeated -secret key=value flags.
type secretFlag map[string]string

func (s secretFlag) String() string { return "" }

func (s secretFlag) Set(v string) error {
	k, val, ok := strings.Cut(v, "=")
	if !ok || k == "" {
		return fmt.Errorf("%q is not key=value", v)
	}
	s[k] = val
	return nil
}

// setHelp makes -h print Nomad-style help: the usage line, what the
// command does, then its options.
func setHelp(m *meta, usage, text string) {
	m.fs.Usage = func() {
		fmt.Fprintf(m.fs.Output(), "Usage: troupe %s\n\n  %s\n\nOptions:\n\n", usage, text)
		m.fs.PrintDefaults()
	}
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
