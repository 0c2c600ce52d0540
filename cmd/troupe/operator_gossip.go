package main

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"sort"

	"github.com/troupe-dev/troupe/agent"
	"github.com/troupe-dev/troupe/httpapi"
)

// gossipKeyringCommand is `troupe operator gossip keyring`, as Nomad's:
// -generate (or `generate`) prints a new key for -encrypt; -list,
// -install KEY, -use KEY and -remove KEY change the keyring of every
// member of the running cluster through the agent's API
// (/v1/agent/keyring/...). A rotation is -install, then -use, then
// -remove of the old key.
func gossipKeyringCommand(args []string, stdout, stderr io.Writer) int {
	m := newMeta("operator gossip keyring", stdout, stderr, false)
	generate := m.fs.Bool("generate", false, "print a new random gossip encryption key (32 bytes, base64)")
	list := m.fs.Bool("list", false, "list the installed keys and how many members hold each")
	var ops []string
	var key string
	for _, op := range []struct{ name, usage string }{
		{httpapi.KeyringInstall, "install KEY on every member (gossip encrypted with it is then read)"},
		{httpapi.KeyringUse, "make the installed KEY the one every member encrypts with"},
		{httpapi.KeyringRemove, "remove KEY from every member (not the primary one)"},
	} {
		m.fs.Func(op.name, op.usage, func(v string) error {
			ops, key = append(ops, op.name), v
			return nil
		})
	}
	rest, code, ok := m.parse(args)
	if !ok {
		return code
	}
	if len(rest) == 1 && rest[0] == "generate" {
		*generate = true
	} else if len(rest) > 0 {
		fmt.Fprintf(stderr, "Error: unexpected arguments %q\n", rest)
		return 1
	}
	if *list {
		ops = append(ops, httpapi.KeyringList)
	}
	switch {
	case *generate && len(ops) == 0:
		k, err := agent.NewGossipKey()
		if err != nil {
			return m.fail("generate", err)
		}
		fmt.Fprintln(stdout, k)
		return 0
	case len(ops) != 1 || *generate:
		fmt.Fprintln(stderr, "Usage: troupe operator gossip keyring [-generate | -list | -install KEY | -use KEY | -remove KEY] (exactly one)")
		return 1
	}
	resp, err := keyringCall(m, ops[0], key)
	if err != nil {
		return m.fail("keyring "+ops[0], err)
	}
	printKeyring(stdout, ops[0], resp)
	return 0
}

// keyringCall sends one keyring operation to the agent.
func keyringCall(m *meta, op, key string) (*httpapi.KeyringResponse, error) {
	c, err := m.client()
	if err != nil {
		return nil, err
	}
	hc, _, err := m.httpClient()
	if err != nil {
		return nil, err
	}
	if hc == nil {
		hc = http.DefaultClient
	}
	return httpapi.CallKeyring(context.Background(), hc, c.Address(), op, key, m.tokenOf(), false)
}

func printKeyring(w io.Writer, op string, r *httpapi.KeyringResponse) {
	switch op {
	case httpapi.KeyringList:
		fmt.Fprintln(w, "==> Gathering installed encryption keys...")
		keys := make([]string, 0, len(r.Keys))
		for k := range r.Keys {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		fmt.Fprintln(w, "\nKey")
		for _, k := range keys {
			fmt.Fprintf(w, "%s [%d/%d]\n", k, r.Keys[k], r.NumNodes)
		}
	case httpapi.KeyringInstall:
		fmt.Fprintf(w, "==> Installed the new gossip encryption key on %d nodes\n", r.NumNodes)
	case httpapi.KeyringUse:
		fmt.Fprintf(w, "==> Changed the primary gossip encryption key on %d nodes\n", r.NumNodes)
	case httpapi.KeyringRemove:
		fmt.Fprintf(w, "==> Removed the gossip encryption key from %d nodes\n", r.NumNodes)
	}
}
