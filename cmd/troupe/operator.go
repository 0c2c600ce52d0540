package main

import (
	"fmt"
	"io"
	"strconv"
)

// raftListPeersCommand is `troupe operator raft list-peers [-json]`.
func raftListPeersCommand(args []string, stdout, stderr io.Writer) int {
	m := newMeta("operator raft list-peers", stdout, stderr, true)
	c, code, ok := m.parseNone(args)
	if !ok {
		return code
	}
	conf, err := c.Operator().RaftGetConfiguration(nil)
	if err != nil {
		return m.fail("retrieving the raft configuration", err)
	}
	if m.json {
		return m.printJSON(conf)
	}
	rows := make([][]string, 0, len(conf.Servers))
	for _, s := range conf.Servers {
		state := "follower"
		if s.Leader {
			state = "leader"
		}
		rows = append(rows, []string{s.Node, s.ID, s.Address, state, strconv.FormatBool(s.Voter), s.RaftProtocol})
	}
	writeTable(m.stdout, []string{"Node", "ID", "Address", "State", "Voter", "RaftProtocol"}, rows)
	return exitOK
}

// raftRemovePeerCommand is `troupe operator raft remove-peer -peer-id ID`.
func raftRemovePeerCommand(args []string, stdout, stderr io.Writer) int {
	m := newMeta("operator raft remove-peer", stdout, stderr, false)
	id := m.fs.String("peer-id", "", "raft ID of the server to remove (see list-peers)")
	rest, code, ok := m.parse(args)
	if !ok {
		return code
	}
	if len(rest) != 0 || *id == "" {
		return m.usageError("-peer-id ID")
	}
	c, err := m.client()
	if err != nil {
		return m.fail("creating the API client", err)
	}
	if err := c.Operator().RaftRemovePeer(*id, nil); err != nil {
		return m.fail("removing the peer", err)
	}
	fmt.Fprintf(m.stdout, "Removed peer with ID %q\n", *id)
	return exitOK
}
