package main

import (
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/troupe-dev/troupe/api"
)

// aclCommands are `troupe acl <sub>`: bootstrap, policies and tokens, in
// the shapes of Nomad's CLI.
func aclCommands() *cmdNode {
	return &cmdNode{synopsis: "Bootstrap ACLs, manage ACL policies and tokens", subs: map[string]*cmdNode{
		"bootstrap": {synopsis: "Make the initial management token", run: aclBootstrapCommand},
		"policy": {synopsis: "Manage ACL policies", subs: map[string]*cmdNode{
			"apply":  {synopsis: "Create or update an ACL policy from a rules file", run: aclPolicyApplyCommand},
			"info":   {synopsis: "Show an ACL policy", run: aclPolicyInfoCommand},
			"list":   {synopsis: "List ACL policies", run: aclPolicyListCommand},
			"delete": {synopsis: "Delete an ACL policy", run: aclPolicyDeleteCommand},
		}},
		"token": aclTokenCommands(),
	}}
}

// aclBootstrapCommand is `troupe acl bootstrap [-json] [FILE]`: FILE ("-"
// for stdin) holds the operator's own secret for the token.
func aclBootstrapCommand(args []string, stdout, stderr io.Writer) int {
	m := newMeta("acl bootstrap", stdout, stderr, true)
	setHelp(m, "acl bootstrap [options] [FILE]", `Makes the initial management token and prints it with its secret (shown
  only this once). FILE ("-" for stdin) may hold the secret to use.`)
	rest, code, ok := m.parse(args)
	if !ok {
		return code
	}
	if len(rest) > 1 {
		return m.usageError("at most one argument: the secret's FILE")
	}
	secret := ""
	if len(rest) == 1 {
		b, err := readFileOrStdin(rest[0])
		if err != nil {
			return m.fail("reading the bootstrap secret", err)
		}
		if secret = strings.TrimSpace(string(b)); secret == "" {
			return m.fail("reading the bootstrap secret", fmt.Errorf("%s is empty", rest[0]))
		}
	}
	c, err := m.client()
	if err != nil {
		return m.fail("creating the API client", err)
	}
	t, err := c.ACL().Bootstrap(secret)
	if err != nil {
		return m.fail("bootstrapping", err)
	}
	return m.printToken(t)
}

// readFileOrStdin reads path, or stdin for "-".
func readFileOrStdin(path string) ([]byte, error) {
	if path == "-" {
		return io.ReadAll(os.Stdin)
	}
	return os.ReadFile(path)
}

// aclPolicyApplyCommand is `troupe acl policy apply [-description D] NAME FILE`.
func aclPolicyApplyCommand(args []string, stdout, stderr io.Writer) int {
	m := newMeta("acl policy apply", stdout, stderr, false)
	setHelp(m, "acl policy apply [options] NAME FILE", `Creates or replaces the ACL policy NAME with the rules in FILE ("-" for
  stdin), in Nomad's HCL rule syntax.`)
	desc := m.fs.String("description", "", "the policy's description")
	rest, c, code, ok := m.parseN(args, 2, "NAME FILE")
	if !ok {
		return code
	}
	rules, err := readFileOrStdin(rest[1])
	if err != nil {
		return m.fail("reading the policy rules", err)
	}
	if err := c.ACL().ApplyPolicy(&api.ACLPolicy{Name: rest[0], Description: *desc, Rules: string(rules)}); err != nil {
		return m.fail("writing the ACL policy", err)
	}
	fmt.Fprintf(m.stdout, "Successfully wrote %q ACL policy!\n", rest[0])
	return exitOK
}

// aclPolicyInfoCommand is `troupe acl policy info [-json] NAME`.
func aclPolicyInfoCommand(args []string, stdout, stderr io.Writer) int {
	m := newMeta("acl policy info", stdout, stderr, true)
	setHelp(m, "acl policy info [options] NAME", "Shows an ACL policy and its rules.")
	name, c, code, ok := m.parseOne(args, "NAME")
	if !ok {
		return code
	}
	p, err := c.ACL().Policy(name)
	if err != nil {
		return m.fail("reading the ACL policy", err)
	}
	if m.json {
		return m.printJSON(p)
	}
	writeKV(m.stdout, []kv{{"Name", p.Name}, {"Description", orNone(p.Description)},
		{"CreateIndex", fmt.Sprint(p.CreateIndex)}, {"ModifyIndex", fmt.Sprint(p.ModifyIndex)}})
	fmt.Fprintf(m.stdout, "\nRules\n\n%s\n", strings.TrimRight(p.Rules, "\n"))
	return exitOK
}

// aclPolicyListCommand is `troupe acl policy list [-json]`.
func aclPolicyListCommand(args []string, stdout, stderr io.Writer) int {
	m := newMeta("acl policy list", stdout, stderr, true)
	setHelp(m, "acl policy list [options]", "Lists the ACL policies.")
	c, code, ok := m.parseNone(args)
	if !ok {
		return code
	}
	ps, err := c.ACL().Policies()
	if err != nil {
		return m.fail("listing ACL policies", err)
	}
	if m.json {
		return m.printJSON(ps)
	}
	if len(ps) == 0 {
		fmt.Fprintln(m.stdout, "No policies found")
		return exitOK
	}
	rows := make([][]string, 0, len(ps))
	for _, p := range ps {
		rows = append(rows, []string{p.Name, orNone(p.Description)})
	}
	writeTable(m.stdout, []string{"Name", "Description"}, rows)
	return exitOK
}

// aclPolicyDeleteCommand is `troupe acl policy delete NAME`.
func aclPolicyDeleteCommand(args []string, stdout, stderr io.Writer) int {
	m := newMeta("acl policy delete", stdout, stderr, false)
	setHelp(m, "acl policy delete [options] NAME", "Deletes an ACL policy.")
	name, c, code, ok := m.parseOne(args, "NAME")
	if !ok {
		return code
	}
	if err := c.ACL().DeletePolicy(name); err != nil {
		return m.fail("deleting the ACL policy", err)
	}
	fmt.Fprintf(m.stdout, "Successfully deleted %q ACL policy!\n", name)
	return exitOK
}
