package main

import (
	"io"
	"strconv"
)

// raftListPeersCommand is `troupe operator raft list-peers [-json]`.
func raftListPeersCommand(args []string, stdout, stderr io.Writer) int {
	m := newMeta("operator raft list-peers", stdout, stderr, true)
	rest, code, ok := m.parse(args)
	if !ok {
		return code
	}
	if len(rest) != 0 {
		return m.usageError("no arguments")
	}
	c, err := m.client()
	if err != nil {
		return m.fail("creating the API client", err)
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
