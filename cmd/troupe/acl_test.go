package main

import (
	"bytes"
	"encoding/json"
	"log/slog"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/troupe-dev/troupe/agent"
	"github.com/troupe-dev/troupe/api"
)

// startACLAgent starts a real server-only agent with ACLs on; its log
// lines go to logs.
func startACLAgent(t *testing.T, logs *bytes.Buffer) string {
	cfg := agent.DefaultConfig()
	cfg.Client = false
	cfg.ACLEnabled = true
	cfg.HTTPAddr = "127.0.0.1:0"
	cfg.DataDir = t.TempDir()
	cfg.Logger = slog.New(slog.NewTextHandler(logs, &slog.HandlerOptions{Level: slog.LevelDebug}))
	return "http://" + startTestAgent(t, cfg).HTTPAddr()
}

// aclCLI runs `troupe acl <args>` with -address addr (and -token
// secret) placed after the command words.
func aclCLI(addr, secret string, args ...string) (int, string, string) {
	var stdout, stderr bytes.Buffer
	full := append([]string{"acl"}, args...)
	at := 1
	for at < len(full) && isCommandWord(full[:at+1]) {
		at++
	}
	flags := []string{"-address", addr}
	if secret != "" {
		flags = append(flags, "-token", secret)
	}
	full = append(full[:at:at], append(flags, full[at:]...)...)
	code := run(full, &stdout, &stderr)
	return code, stdout.String(), stderr.String()
}

// TestACLCLI drives every `troupe acl` command against a real agent with
// ACLs on: bootstrap once, policies, tokens (create with -policy, -ttl and
// -json, info without the secret, list, update, self, delete), and the
// refusals of a client token and of a deleted one.
func TestACLCLI(t *testing.T) {
	var logs bytes.Buffer
	addr := startACLAgent(t, &logs)

	code, out, errOut := aclCLI(addr, "", "bootstrap", "-json")
	require.Equal(t, 0, code, errOut)
	var boot api.ACLToken
	require.NoError(t, json.Unmarshal([]byte(out), &boot))
	require.Equal(t, "management", boot.Type)
	require.NotEmpty(t, boot.SecretID)
	mgmt := boot.SecretID

	code, _, errOut = aclCLI(addr, "", "bootstrap")
	require.Equal(t, 1, code, "a second bootstrap is refused")
	require.Contains(t, errOut, "bootstrap")

	rules := writeFile(t, "readonly.hcl", `namespace "default" { policy = "read" }`+"\n")
	code, out, errOut = aclCLI(addr, mgmt, "policy", "apply", "-description", "reads jobs", "readonly", rules)
	require.Equal(t, 0, code, errOut)
	require.Equal(t, "Successfully wrote \"readonly\" ACL policy!\n", out)
	code, _, errOut = aclCLI(addr, mgmt, "policy", "apply", "bad", writeFile(t, "bad.hcl", `namespace "x" { policy = "nope" }`))
	require.Equal(t, 1, code)
	require.Contains(t, errOut, "nope", "a bad rule is refused by name")

	code, out, errOut = aclCLI(addr, mgmt, "policy", "list")
	require.Equal(t, 0, code, errOut)
	require.Regexp(t, `(?m)^Name\s+Description\nreadonly\s+reads jobs\n$`, out)
	code, out, errOut = aclCLI(addr, mgmt, "policy", "info", "readonly")
	require.Equal(t, 0, code, errOut)
	require.Regexp(t, `(?m)^Name\s+= readonly$`, out)
	require.Regexp(t, `(?m)^Description\s+= reads jobs$`, out)
	require.Contains(t, out, "\nRules\n\nnamespace \"default\" { policy = \"read\" }\n")

	code, out, errOut = aclCLI(addr, mgmt, "token", "create", "-name", "reader", "-policy", "readonly", "-ttl", "1h", "-json")
	require.Equal(t, 0, code, errOut)
	var reader api.ACLToken
	require.NoError(t, json.Unmarshal([]byte(out), &reader))
	require.Equal(t, []string{"readonly"}, reader.Policies)
	require.Equal(t, "client", reader.Type)
	require.NotNil(t, reader.ExpirationTime, "-ttl sets an expiry")
	require.WithinDuration(t, time.Now().Add(time.Hour), *reader.ExpirationTime, time.Minute)

	code, out, errOut = aclCLI(addr, mgmt, "token", "info", reader.AccessorID)
	require.Equal(t, 0, code, errOut)
	require.Regexp(t, `(?m)^Accessor ID\s+= `+reader.AccessorID+`$`, out)
	require.Regexp(t, `(?m)^Secret ID\s+= <hidden>$`, out, "the servers keep only a hash")
	require.Regexp(t, `(?m)^Policies\s+= \[readonly\]$`, out)
	require.NotContains(t, out, reader.SecretID)

	code, out, errOut = aclCLI(addr, reader.SecretID, "token", "self")
	require.Equal(t, 0, code, errOut)
	require.Regexp(t, `(?m)^Name\s+= reader$`, out)
	require.Regexp(t, `(?m)^Type\s+= client$`, out)

	code, out, errOut = aclCLI(addr, mgmt, "token", "list")
	require.Equal(t, 0, code, errOut)
	require.Regexp(t, `(?m)^Name\s+Type\s+Global\s+Accessor ID\s+Expired$`, out)
	require.Regexp(t, `(?m)^reader\s+client\s+false\s+`+reader.AccessorID+`\s+false$`, out)
	require.Regexp(t, `(?m)^Bootstrap Token\s+management\s+true\s+`+boot.AccessorID+`\s+false$`, out)
	require.NotContains(t, out, reader.SecretID)
	require.NotContains(t, out, mgmt)

	// The client token may read jobs but not manage ACLs.
	code, _, errOut = aclCLI(addr, reader.SecretID, "token", "list")
	require.Equal(t, 1, code)
	require.Contains(t, errOut, "Permission denied")
	var stdout, stderr bytes.Buffer
	require.Equal(t, 0, run([]string{"job", "status", "-address", addr, "-token", reader.SecretID}, &stdout, &stderr), stderr.String())

	code, out, errOut = aclCLI(addr, mgmt, "token", "update", "-name", "reader2", reader.AccessorID)
	require.Equal(t, 0, code, errOut)
	require.Regexp(t, `(?m)^Name\s+= reader2$`, out)
	require.Regexp(t, `(?m)^Policies\s+= \[readonly\]$`, out, "update keeps what no flag changes")
	require.NotRegexp(t, `(?m)^Expiry Time\s+= <none>$`, out, "and the expiry")
	code, _, errOut = aclCLI(addr, mgmt, "token", "update", "-type", "management", reader.AccessorID)
	require.Equal(t, 1, code)
	require.Contains(t, errOut, "cannot change type")

	code, out, errOut = aclCLI(addr, mgmt, "token", "create", "-type", "management", "-name", "ops")
	require.Equal(t, 0, code, errOut)
	require.Regexp(t, `(?m)^Type\s+= management$`, out)
	require.Regexp(t, `(?m)^Policies\s+= n/a$`, out)
	require.Regexp(t, `(?m)^Secret ID\s+= [0-9a-f-]{36}$`, out, "the secret is shown once, at creation")

	code, out, errOut = aclCLI(addr, mgmt, "token", "delete", reader.AccessorID)
	require.Equal(t, 0, code, errOut)
	require.Equal(t, "Token "+reader.AccessorID+" successfully deleted\n", out)
	code, _, errOut = aclCLI(addr, reader.SecretID, "token", "self")
	require.Equal(t, 1, code)
	require.Contains(t, errOut, "ACL token not found")

	code, out, errOut = aclCLI(addr, mgmt, "policy", "delete", "readonly")
	require.Equal(t, 0, code, errOut)
	require.Equal(t, "Successfully deleted \"readonly\" ACL policy!\n", out)
	code, out, _ = aclCLI(addr, mgmt, "policy", "list")
	require.Equal(t, 0, code)
	require.Equal(t, "No policies found\n", out)

	for _, secret := range []string{mgmt, reader.SecretID} {
		require.NotContains(t, logs.String(), secret, "a secret in the agent's log")
	}
}
