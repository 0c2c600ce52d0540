package main

import (
	"encoding/json"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"github.com/troupe-dev/troupe/api"
)

func sampleActors() *api.ActorTree {
	return &api.ActorTree{Node: "n1n1n1n1", Actors: []*api.ActorInfo{
		{Path: "nodes", Kind: "nodes", Phase: "running", Children: []string{"nodes/n1"}},
		{Path: "nodes/n1", Parent: "nodes", Kind: "node", Phase: "ready", Children: []string{"nodes/n1/allocs/a1", "nodes/n1/allocs/a2"}},
		{Path: "nodes/n1/allocs/a2", Parent: "nodes/n1", Kind: "alloc", Phase: "running", MailboxLen: 2, Restarts: 1,
			LastMessage: "AllocUpdated", LastMessageAt: ago(3 * time.Second)},
		{Path: "nodes/n1/allocs/a1", Parent: "nodes/n1", Kind: "alloc", Phase: "running",
			Children: []string{"nodes/n1/allocs/a1/vol-x"}},
		{Path: "nodes/n1/allocs/a1/vol-x", Parent: "nodes/n1/allocs/a1", Kind: "unpublish", Phase: "retrying"},
		{Path: "scheduler", Kind: "scheduler", Phase: "idle", LastMessage: "EvalReady", LastMessageAt: ago(70 * time.Second)},
	}}
}

func TestActors(t *testing.T) {
	tests := []struct {
		name string
		args []string
		want string
	}{
		{name: "whole tree", want: "" +
			"node n1n1n1n1\n" +
			"├── nodes              nodes      running   mailbox=0 restarts=0 last=-\n" +
			"│   └── n1             node       ready     mailbox=0 restarts=0 last=-\n" +
			"│       ├── allocs/a1  alloc      running   mailbox=0 restarts=0 last=-\n" +
			"│       │   └── vol-x  unpublish  retrying  mailbox=0 restarts=0 last=-\n" +
			"│       └── allocs/a2  alloc      running   mailbox=2 restarts=1 last=AllocUpdated (3s ago)\n" +
			"└── scheduler          scheduler  idle      mailbox=0 restarts=0 last=EvalReady (1m10s ago)\n"},
		{name: "subtree", args: []string{"nodes/n1/allocs/a1"}, want: "" +
			"node n1n1n1n1\n" +
			"└── nodes/n1/allocs/a1  alloc      running   mailbox=0 restarts=0 last=-\n" +
			"    └── vol-x           unpublish  retrying  mailbox=0 restarts=0 last=-\n"},
		{name: "kind keeps ancestors", args: []string{"-kind", "unpublish"}, want: "" +
			"node n1n1n1n1\n" +
			"└── nodes              nodes      running   mailbox=0 restarts=0 last=-\n" +
			"    └── n1             node       ready     mailbox=0 restarts=0 last=-\n" +
			"        └── allocs/a1  alloc      running   mailbox=0 restarts=0 last=-\n" +
			"            └── vol-x  unpublish  retrying  mailbox=0 restarts=0 last=-\n"},
		{name: "kind matches nothing", args: []string{"-kind", "volume"}, want: "No actors\n"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := newFakeAPI(t)
			f.actors[""] = sampleActors()
			code, out, errOut := f.runCLI(append([]string{"actors"}, tt.args...)...)
			require.Equal(t, 0, code, errOut)
			require.Equal(t, tt.want, out)
		})
	}
}

func TestActorsNodeAndErrors(t *testing.T) {
	f := newFakeAPI(t)
	f.nodes[nodeID] = sampleNode()
	f.actors[nodeID] = sampleActors()

	code, out, errOut := f.runCLI("actors", "-json", "-kind", "alloc", "-node", "n1n1")
	require.Equal(t, 0, code, errOut)
	var got api.ActorTree
	require.NoError(t, json.Unmarshal([]byte(out), &got))
	paths := make([]string, 0, len(got.Actors))
	for _, a := range got.Actors {
		paths = append(paths, a.Path)
	}
	require.Equal(t, []string{"nodes", "nodes/n1", "nodes/n1/allocs/a1", "nodes/n1/allocs/a2"}, paths)

	code, _, errOut = f.runCLI("actors", "-node", nodeID, "no/such")
	require.Equal(t, 1, code)
	require.Contains(t, errOut, `Error finding actor: troupe: no match: no actor at path "no/such"`)
}
