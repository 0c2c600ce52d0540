package main

import (
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/troupe-dev/troupe/api"
)

func aclTokenCommands() *cmdNode {
	return &cmdNode{synopsis: "Manage ACL tokens", subs: map[string]*cmdNode{
		"create": {synopsis: "Create an ACL token", run: aclTokenCreateCommand},
		"info":   {synopsis: "Show an ACL token", run: aclTokenInfoCommand},
		"list":   {synopsis: "List ACL tokens", run: aclTokenListCommand},
		"update": {synopsis: "Change an ACL token's name, type or policies", run: aclTokenUpdateCommand},
		"delete": {synopsis: "Delete an ACL token", run: aclTokenDeleteCommand},
		"self":   {synopsis: "Show the token this command sends", run: aclTokenSelfCommand},
	}}
}

// policyFlags collects repeated -policy flags.
type policyFlags []string

func (p *policyFlags) String() string { return strings.Join(*p, ",") }

func (p *policyFlags) Set(s string) error {
	if s == "" {
		return fmt.Errorf("a policy name is empty")
	}
	*p = append(*p, s)
	return nil
}

// tokenFlags are the flags create and update share.
type tokenFlags struct {
	name, typ string
	policies  policyFlags
}

func addTokenFlags(m *meta) *tokenFlags {
	f := &tokenFlags{}
	m.fs.StringVar(&f.name, "name", "", "the token's human-readable name")
	m.fs.StringVar(&f.typ, "type", "", `the token's type: "client" (default) or "management"`)
	m.fs.Var(&f.policies, "policy", "a policy of the token (repeatable; client tokens only)")
	return f
}

// aclTokenCreateCommand is `troupe acl token create [-name N] [-type T]
// [-policy P]... [-global] [-ttl D] [-json]`.
func aclTokenCreateCommand(args []string, stdout, stderr io.Writer) int {
	m := newMeta("acl token create", stdout, stderr, true)
	setHelp(m, "acl token create [options]", "Creates an ACL token and prints it with its secret (shown only this once).")
	f := addTokenFlags(m)
	global := m.fs.Bool("global", false, "replicate the token to every region")
	ttl := m.fs.String("ttl", "", `the token's time to live ("1h"); none: it never expires`)
	c, code, ok := m.parseNone(args)
	if !ok {
		return code
	}
	t := &api.ACLToken{Name: f.name, Type: f.typ, Policies: f.policies, Global: *global}
	if t.Type == "" {
		t.Type = "client"
	}
	if *ttl != "" {
		d, err := time.ParseDuration(*ttl)
		if err != nil || d <= 0 {
			return m.fail("parsing -ttl", fmt.Errorf("%q is not a positive duration", *ttl))
		}
		t.ExpirationTTL = api.Duration(d)
	}
	out, err := c.ACL().CreateToken(t)
	if err != nil {
		return m.fail("creating the ACL token", err)
	}
	return m.printToken(out)
}

// aclTokenUpdateCommand is `troupe acl token update [-name N] [-type T]
// [-policy P]... ACCESSOR`: the flags given replace the token's values.
func aclTokenUpdateCommand(args []string, stdout, stderr io.Writer) int {
	m := newMeta("acl token update", stdout, stderr, true)
	setHelp(m, "acl token update [options] ACCESSOR", "Changes an ACL token's name, type or policies (those given replace the old).")
	f := addTokenFlags(m)
	id, c, code, ok := m.parseOne(args, "ACCESSOR")
	if !ok {
		return code
	}
	t, err := c.ACL().Token(id)
	if err != nil {
		return m.fail("reading the ACL token", err)
	}
	if f.name != "" {
		t.Name = f.name
	}
	if f.typ != "" {
		t.Type = f.typ
	}
	if len(f.policies) > 0 {
		t.Policies = f.policies
	}
	out, err := c.ACL().UpdateToken(t)
	if err != nil {
		return m.fail("updating the ACL token", err)
	}
	return m.printToken(out)
}

// aclTokenInfoCommand is `troupe acl token info [-json] ACCESSOR`.
func aclTokenInfoCommand(args []string, stdout, stderr io.Writer) int {
	m := newMeta("acl token info", stdout, stderr, true)
	setHelp(m, "acl token info [options] ACCESSOR", "Shows an ACL token (its secret is kept only as a hash: never shown again).")
	id, c, code, ok := m.parseOne(args, "ACCESSOR")
	if !ok {
		return code
	}
	return m.showToken(c, id)
}

// showToken prints the token accessor names; "self" is the one the
// command sends, whose secret it knows.
func (m *meta) showToken(c *api.Client, accessor string) int {
	t, err := c.ACL().Token(accessor)
	if err != nil {
		return m.fail("reading the ACL token", err)
	}
	if accessor == "self" {
		t.SecretID = m.tokenOf()
	}
	return m.printToken(t)
}

// aclTokenSelfCommand is `troupe acl token self [-json]`.
func aclTokenSelfCommand(args []string, stdout, stderr io.Writer) int {
	m := newMeta("acl token self", stdout, stderr, true)
	setHelp(m, "acl token self [options]", "Shows the ACL token this command sends (-token, $TROUPE_TOKEN, $NOMAD_TOKEN).")
	c, code, ok := m.parseNone(args)
	if !ok {
		return code
	}
	return m.showToken(c, "self")
}

// aclTokenListCommand is `troupe acl token list [-json]`.
func aclTokenListCommand(args []string, stdout, stderr io.Writer) int {
	m := newMeta("acl token list", stdout, stderr, true)
	setHelp(m, "acl token list [options]", "Lists the ACL tokens (never their secrets).")
	c, code, ok := m.parseNone(args)
	if !ok {
		return code
	}
	ts, err := c.ACL().Tokens()
	if err != nil {
		return m.fail("listing ACL tokens", err)
	}
	if m.json {
		return m.printJSON(ts)
	}
	if len(ts) == 0 {
		fmt.Fprintln(m.stdout, "No tokens found")
		return exitOK
	}
	now := nowFunc()
	rows := make([][]string, 0, len(ts))
	for _, t := range ts {
		expired := t.ExpirationTime != nil && !t.ExpirationTime.After(now)
		rows = append(rows, []string{t.Name, t.Type, fmt.Sprint(t.Global), t.AccessorID, fmt.Sprint(expired)})
	}
	writeTable(m.stdout, []string{"Name", "Type", "Global", "Accessor ID", "Expired"}, rows)
	return exitOK
}

// aclTokenDeleteCommand is `troupe acl token delete ACCESSOR`.
func aclTokenDeleteCommand(args []string, stdout, stderr io.Writer) int {
	m := newMeta("acl token delete", stdout, stderr, false)
	setHelp(m, "acl token delete [options] ACCESSOR", "Deletes an ACL token.")
	id, c, code, ok := m.parseOne(args, "ACCESSOR")
	if !ok {
		return code
	}
	if err := c.ACL().DeleteToken(id); err != nil {
		return m.fail("deleting the ACL token", err)
	}
	fmt.Fprintf(m.stdout, "Token %s successfully deleted\n", id)
	return exitOK
}

// printToken prints a token as JSON (-json) or in Nomad's "Key = Value"
// shape; the secret is shown only where the answer has it.
func (m *meta) printToken(t *api.ACLToken) int {
	if m.json {
		return m.printJSON(t)
	}
	secret, expiry, policies := t.SecretID, "<none>", fmt.Sprint(t.Policies)
	if secret == "" {
		secret = "<hidden>"
	}
	if t.ExpirationTime != nil {
		expiry = t.ExpirationTime.String()
	}
	if t.Type == "management" {
		policies = "n/a"
	}
	writeKV(m.stdout, []kv{{"Accessor ID", t.AccessorID}, {"Secret ID", secret}, {"Name", orNone(t.Name)},
		{"Type", t.Type}, {"Global", fmt.Sprint(t.Global)}, {"Create Time", t.CreateTime.String()},
		{"Expiry Time", expiry}, {"Create Index", fmt.Sprint(t.CreateIndex)},
		{"Modify Index", fmt.Sprint(t.ModifyIndex)}, {"Policies", policies}})
	return exitOK
}
