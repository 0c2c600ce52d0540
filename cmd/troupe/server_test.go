package main

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
	"github.com/troupe-dev/troupe/api"
)

func TestServerMembers(t *testing.T) {
	f := newFakeAPI(t)
	tags := func(rpc string) map[string]string {
		return map[string]string{"region": "global", "dc": "dc1", "build": "0.1.0", "raft_vsn": "3", "rpc_addr": rpc, "voter": "true"}
	}
	f.members = &api.ServerMembers{ServerName: "s1", Members: []*api.AgentMember{
		{Name: "s2.global", Addr: "10.0.0.2", Port: 4648, Status: "alive", Tags: tags("10.0.0.2:4647")},
		{Name: "s1.global", Addr: "10.0.0.1", Port: 4648, Status: "alive", Tags: tags("10.0.0.1:4647")},
	}}
	f.leader = "10.0.0.2:4647"
	code, out, errOut := f.runCLI("server", "members")
	require.Equal(t, 0, code, errOut)
	lines := strings.Split(strings.TrimSpace(out), "\n")
	require.Len(t, lines, 3)
	require.Regexp(t, `^Name\s+Address\s+Port\s+Status\s+Leader\s+Voter\s+Raft Version\s+Build\s+Datacenter\s+Region$`, lines[0])
	require.Regexp(t, `^s1\.global  10\.0\.0\.1  4648  alive   false   true   3\s+0\.1\.0\s+dc1\s+global$`, lines[1])
	require.Regexp(t, `^s2\.global  10\.0\.0\.2  4648  alive   true    true   3`, lines[2])

	code, out, _ = f.runCLI("server", "members", "-json")
	require.Equal(t, 0, code)
	var got api.ServerMembers
	require.NoError(t, json.Unmarshal([]byte(out), &got))
	require.Len(t, got.Members, 2)
}

// TestServerMembersOtherRegion: another region's server leads by the
// "leader" tag its region gossips, this region's by /v1/status/leader.
func TestServerMembersOtherRegion(t *testing.T) {
	f := newFakeAPI(t)
	f.members = &api.ServerMembers{ServerName: "s1.global", ServerRegion: "global", Members: []*api.AgentMember{
		{Name: "s1.global", Addr: "10.0.0.1", Port: 4648, Status: "alive", Tags: map[string]string{"region": "global", "port": "4649"}},
		{Name: "e1.eu", Addr: "10.1.0.1", Port: 4650, Status: "alive", Tags: map[string]string{"region": "eu", "leader": "true"}},
		{Name: "e2.eu", Addr: "10.1.0.2", Port: 4650, Status: "alive", Tags: map[string]string{"region": "eu", "leader": "false"}},
	}}
	f.leader = "10.0.0.1:4649"
	code, out, errOut := f.runCLI("server", "members")
	require.Equal(t, 0, code, errOut)
	lines := strings.Split(strings.TrimSpace(out), "\n")
	require.Len(t, lines, 4)
	require.Regexp(t, `^e1\.eu\s+10\.1\.0\.1\s+4650\s+alive\s+true\s`, lines[1])
	require.Regexp(t, `^e2\.eu\s+10\.1\.0\.2\s+4650\s+alive\s+false\s`, lines[2])
	require.Regexp(t, `^s1\.global\s+10\.0\.0\.1\s+4648\s+alive\s+true\s`, lines[3])
}

func TestRaftListPeers(t *testing.T) {
	f := newFakeAPI(t)
	f.raft = &api.RaftConfiguration{Servers: []*api.RaftServer{
		{ID: "id-1", Node: "s1", Address: "10.0.0.1:4647", Leader: true, Voter: true, RaftProtocol: "3"},
		{ID: "id-2", Node: "s2", Address: "10.0.0.2:4647", Voter: true, RaftProtocol: "3"},
	}}
	code, out, errOut := f.runCLI("operator", "raft", "list-peers")
	require.Equal(t, 0, code, errOut)
	require.Equal(t, ""+
		"Node  ID    Address        State     Voter  RaftProtocol\n"+
		"s1    id-1  10.0.0.1:4647  leader    true   3\n"+
		"s2    id-2  10.0.0.2:4647  follower  true   3\n", out)
}
