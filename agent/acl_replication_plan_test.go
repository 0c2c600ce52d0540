package agent

import (
	"strings"
	"testing"

	"github.com/hashicorp/raft"
	"github.com/stretchr/testify/require"
	"google.golang.org/protobuf/proto"

	"github.com/troupe-dev/troupe/cluster/state"
	"github.com/troupe-dev/troupe/messages"
)

// planSnap is a state holding the given policies and tokens.
func planSnap(t *testing.T, policies []*messages.ACLPolicy, tokens []*messages.ACLToken) *state.Snap {
	t.Helper()
	fsm := state.NewFSM(state.NewStore(), nil)
	for i, cmd := range []*messages.Command{
		{Cmd: &messages.Command_UpsertACLPolicies{UpsertACLPolicies: &messages.UpsertACLPolicies{Policies: policies}}},
		{Cmd: &messages.Command_UpsertACLTokens{UpsertACLTokens: &messages.UpsertACLTokens{Tokens: tokens}}},
	} {
		data, err := proto.Marshal(cmd)
		require.NoError(t, err)
		if res, ok := fsm.Apply(&raft.Log{Index: uint64(i + 1), Type: raft.LogCommand, Data: data}).(error); ok {
			require.NoError(t, res)
		}
	}
	return fsm.Store().Snapshot()
}

// TestACLReplicationPlan: the plan upserts what is new or differs
// (policies before tokens), deletes the global tokens and the policies
// gone (tokens before policies), and leaves local tokens and what is the
// same alone.
func TestACLReplicationPlan(t *testing.T) {
	rules := `namespace "default" { policy = "read" }`
	pol := func(name, desc string) *messages.ACLPolicy {
		return &messages.ACLPolicy{Name: name, Description: desc, Rules: rules}
	}
	tok := func(id string, global bool, policies ...string) *messages.ACLToken {
		return &messages.ACLToken{AccessorID: id, SecretHash: []byte("h-" + id), Name: id, Type: state.ACLTokenClient,
			Policies: policies, Global: global}
	}
	local := planSnap(t, []*messages.ACLPolicy{pol("same", ""), pol("changed", "old"), pol("gone", "")},
		[]*messages.ACLToken{tok("kept", true, "same"), tok("stale", true, "gone"), tok("mine", false, "gone")})
	for _, tc := range []struct {
		name   string
		remote *messages.ReplicateACLsResponse
		want   []string
	}{
		{"in step", &messages.ReplicateACLsResponse{Policies: []*messages.ACLPolicy{pol("same", ""), pol("changed", "old"), pol("gone", "")},
			Tokens: []*messages.ACLToken{tok("kept", true, "same"), tok("stale", true, "gone")}}, nil},
		{"changes", &messages.ReplicateACLsResponse{Policies: []*messages.ACLPolicy{pol("same", ""), pol("changed", "new"), pol("added", "")},
			Tokens: []*messages.ACLToken{tok("kept", true, "same"), tok("fresh", true, "added")}},
			[]string{"upsert policies [changed added]", "upsert tokens [fresh]", "delete tokens [stale]", "delete policies [gone]"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var got []string
			for _, c := range aclReplicationPlan(local, tc.remote) {
				got = append(got, describeACLCommand(c))
			}
			require.Equal(t, tc.want, got)
		})
	}
}

func describeACLCommand(c *messages.Command) string {
	var names []string
	switch m := c.GetCmd().(type) {
	case *messages.Command_UpsertACLPolicies:
		for _, p := range m.UpsertACLPolicies.GetPolicies() {
			names = append(names, p.GetName())
		}
		return "upsert policies " + bracketed(names)
	case *messages.Command_UpsertACLTokens:
		for _, tk := range m.UpsertACLTokens.GetTokens() {
			names = append(names, tk.GetAccessorID())
		}
		return "upsert tokens " + bracketed(names)
	case *messages.Command_DeleteACLTokens:
		return "delete tokens " + bracketed(m.DeleteACLTokens.GetAccessorIDs())
	case *messages.Command_DeleteACLPolicies:
		return "delete policies " + bracketed(m.DeleteACLPolicies.GetNames())
	}
	return "?"
}

func bracketed(names []string) string { return "[" + strings.Join(names, " ") + "]" }
