package main

import (
	"fmt"
	"io"
	"net"
	"sort"
	"strconv"

	"github.com/troupe-dev/troupe/api"
)

// serverMembersCommand is `troupe server members [-json]`. It relies on
// these member Tags: "region", "dc", "build", "raft_vsn" and "rpc_addr"
// (host:port), and Addr with "port", which it compares with /v1/status/leader
// to mark the leader.
func serverMembersCommand(args []string, stdout, stderr io.Writer) int {
	m := newMeta("server members", stdout, stderr, true)
	c, code, ok := m.parseNone(args)
	if !ok {
		return code
	}
	members, err := c.Agent().Members()
	if err != nil {
		return m.fail("querying servers", err)
	}
	if m.json {
		return m.printJSON(members)
	}
	leader, err := c.Status().Leader()
	if err != nil {
		return m.fail("querying the leader", err)
	}
	sort.Slice(members.Members, func(i, j int) bool { return members.Members[i].Name < members.Members[j].Name })
	rows := make([][]string, 0, len(members.Members))
	for _, mem := range members.Members {
		rows = append(rows, []string{mem.Name, mem.Addr, strconv.Itoa(int(mem.Port)), mem.Status,
			strconv.FormatBool(memberLeads(mem, members.ServerRegion, leader)), orNone(mem.Tags["voter"]), orNone(mem.Tags["raft_vsn"]),
			orNone(mem.Tags["build"]), orNone(mem.Tags["dc"]), orNone(mem.Tags["region"])})
	}
	writeTable(m.stdout, []string{"Name", "Address", "Port", "Status", "Leader", "Voter", "Raft Version", "Build", "Datacenter", "Region"}, rows)
	return exitOK
}

// memberLeads says whether mem leads its region: for a server of the
// agent's region, by the leader's address (isLeader); for another
// region's, by the "leader" tag that region gossips over the WAN pool.
func memberLeads(mem *api.AgentMember, region, leader string) bool {
	if r := mem.Tags["region"]; region != "" && r != "" && r != region {
		return mem.Tags["leader"] == "true"
	}
	return isLeader(mem, leader)
}

// serverJoinCommand is `troupe server join ADDR...`: the agent, a server,
// joins the WAN pool of every region's servers through those servers'
// WAN addresses (host, or host:port; the WAN port is 4650 by default).
func serverJoinCommand(args []string, stdout, stderr io.Writer) int {
	m := newMeta("server join", stdout, stderr, false)
	rest, code, ok := m.parse(args)
	if !ok {
		return code
	}
	if len(rest) == 0 {
		return m.usageError("ADDR [ADDR...]")
	}
	c, err := m.client()
	if err != nil {
		return m.fail("building the client", err)
	}
	n, err := c.Agent().Join(rest...)
	if err != nil {
		return m.fail("joining", err)
	}
	fmt.Fprintf(stdout, "Joined %d servers successfully\n", n)
	return exitOK
}

// isLeader compares the member's address as Nomad's CLI does (Addr with
// Tags "port"), then its raft address (Tags "raft_addr"), then its RPC
// address (Tags "rpc_addr"), with the leader's address.
func isLeader(mem *api.AgentMember, leader string) bool {
	if leader == "" {
		return false
	}
	if p := mem.Tags["port"]; p != "" && net.JoinHostPort(mem.Addr, p) == leader {
		return true
	}
	return leader == mem.Tags["raft_addr"] || leader == mem.Tags["rpc_addr"]
}
