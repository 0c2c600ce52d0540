package main

import (
	"bytes"
	"encoding/json"
	"io"
	"io/fs"
	"log/slog"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	nomad "github.com/hashicorp/nomad/api"
	"github.com/stretchr/testify/require"

	"github.com/troupe-dev/troupe/agent"
	"github.com/troupe-dev/troupe/api"
	"github.com/troupe-dev/troupe/internal/syncbuf"
	"github.com/troupe-dev/troupe/runtime/cgroups"
)

// startACLDevAgent starts a real server and client agent with ACLs on
// whose exec tasks run this test binary as their executor, logging to log.
func startACLDevAgent(t *testing.T, log *slog.Logger) *agent.Agent {
	if os.Geteuid() != 0 {
		require.NotEqual(t, "true", os.Getenv("CI"), "CI runs as root")
		t.Skip("needs root: the exec driver isolates its tasks")
	}
	cfg := agent.DefaultConfig()
	cfg.ACLEnabled = true
	cfg.DataDir = t.TempDir()
	cfg.HTTPAddr = "127.0.0.1:0"
	cfg.NodeName = "acl-secrets"
	cfg.ExecutorPath, cfg.ExecutorArgs = os.Args[0], []string{"executor"}
	cfg.ClientBatch = 10 * time.Millisecond
	cfg.StopTasksOnShutdown = true
	cfg.BridgeName, cfg.CNINetwork = "taclsec", "taclsec"
	cfg.CNIStateDir, cfg.NetnsDir = filepath.Join(cfg.DataDir, "cni"), filepath.Join(cfg.DataDir, "netns")
	cfg.ContainerdAddress = filepath.Join(cfg.DataDir, "no-containerd.sock")
	cfg.CgroupParent = "/troupe-test-aclsec-" + filepath.Base(cfg.DataDir)
	cfg.Logger = log
	if cgroups.Detect() != cgroups.ModeNone {
		t.Cleanup(func() {
			if m, err := cgroups.New(cfg.CgroupParent); err == nil {
				_ = m.RemoveParent()
			}
		})
	}
	a := startTestAgent(t, cfg)
	require.Eventually(t, func() bool {
		n := a.Store().Snapshot().NodeByID(a.Node().GetID())
		return n != nil && n.GetStatus() == "ready"
	}, 20*time.Second, 10*time.Millisecond, "node never became ready")
	return a
}

const secretsJobFile = `job "sec" {
  datacenters = ["dc1"]
  group "g" {
    task "t" {
      driver = "exec"
      config {
        command = "/bin/sh"
        args    = ["-c", "while true; do sleep 0.2; done"]
      }
      kill_timeout = "2s"
      resources {
        cpu    = 50
        memory = 32
      }
    }
  }
}
`

const writerRules = `namespace "default" {
  policy       = "write"
  capabilities = ["alloc-exec"]
  variables {
    path "*" { capabilities = ["read", "write", "list"] }
  }
}
`

// cli runs one troupe command with -address and -token after its words.
func cli(t *testing.T, addr, secret string, args ...string) string {
	t.Helper()
	at := 0
	for at < len(args) && isCommandWord(args[:at+1]) {
		at++
	}
	full := append(append([]string{}, args[:at]...), "-address", addr, "-token", secret)
	full = append(full, args[at:]...)
	var stdout, stderr bytes.Buffer
	require.Equal(t, 0, run(full, &stdout, &stderr), "troupe %s: %s", strings.Join(args, " "), stderr.String())
	return stdout.String()
}

// TestSecretsNeverLogged uses every kind of secret an operator handles
// (the bootstrap token, a client token, an operator-chosen token, a token
// later deleted, an unknown one) through the CLI, the HTTP API with both
// headers, Nomad's Go client, an alloc exec and a variable write, then
// greps the agent's debug log, its monitor stream, /v1/actors and its
// data dir: no secret appears in any of them.
func TestSecretsNeverLogged(t *testing.T) {
	var logs syncbuf.Buffer
	a := startACLDevAgent(t, slog.New(slog.NewTextHandler(&logs, &slog.HandlerOptions{Level: slog.LevelDebug})))
	addr := "http://" + a.HTTPAddr()

	var boot api.ACLToken
	require.NoError(t, json.Unmarshal([]byte(cli(t, addr, "", "acl", "bootstrap", "-json")), &boot))
	mgmt := boot.SecretID
	nc, err := nomad.NewClient(&nomad.Config{Address: addr, SecretID: mgmt})
	require.NoError(t, err)
	stop := make(chan struct{})
	var monitored syncbuf.Buffer
	frames, _ := nc.Agent().Monitor(stop, &nomad.QueryOptions{Params: map[string]string{"log_level": "trace"}})
	monitorDone := make(chan struct{})
	go func() {
		defer close(monitorDone)
		for f := range frames {
			if f != nil {
				_, _ = monitored.Write(f.Data)
			}
		}
	}()

	cli(t, addr, mgmt, "acl", "policy", "apply", "writer", writeFile(t, "writer.hcl", writerRules))
	var writer api.ACLToken
	require.NoError(t, json.Unmarshal([]byte(cli(t, addr, mgmt, "acl", "token", "create", "-name", "w", "-policy", "writer", "-json")), &writer))
	chosen := "8f7c1a52-3f7e-4b1e-9d3c-2a8e6b0c4d11"
	chosenTok, err := api.NewClient(&api.Config{Address: addr, Token: mgmt})
	require.NoError(t, err)
	_, err = chosenTok.ACL().CreateToken(&api.ACLToken{Name: "chosen", Type: "client", Policies: []string{"writer"}, SecretID: chosen})
	require.NoError(t, err)
	var doomed api.ACLToken
	require.NoError(t, json.Unmarshal([]byte(cli(t, addr, mgmt, "acl", "token", "create", "-name", "d", "-policy", "writer", "-json")), &doomed))
	unknown := "0d9e4c2b-5a6f-4c3d-8e1f-7b2a9c0d1e2f"
	secrets := map[string]string{"bootstrap": mgmt, "client": writer.SecretID, "chosen": chosen, "deleted": doomed.SecretID, "unknown": unknown}

	cli(t, addr, writer.SecretID, "job", "run", "-detach", writeFile(t, "sec.nomad.hcl", secretsJobFile))
	wc, err := nomad.NewClient(&nomad.Config{Address: addr, SecretID: writer.SecretID})
	require.NoError(t, err)
	var allocID string
	require.Eventually(t, func() bool {
		stubs, _, err := wc.Jobs().Allocations("sec", false, nil)
		if err == nil && len(stubs) == 1 && stubs[0].ClientStatus == "running" {
			allocID = stubs[0].ID
		}
		return allocID != ""
	}, 30*time.Second, 20*time.Millisecond, "the job's allocation never ran")

	var stdout, stderr bytes.Buffer
	require.Equal(t, 0, allocExec([]string{"-address", addr, "-token", writer.SecretID, "-task", "t", allocID, "echo", "exec-ok"}, nil, &stdout, &stderr), stderr.String())
	require.Equal(t, "exec-ok\n", stdout.String())
	cli(t, addr, writer.SecretID, "var", "put", "app/db", "password=hunter2")
	require.Contains(t, cli(t, addr, chosen, "var", "get", "app/db"), "hunter2")
	cli(t, addr, chosen, "job", "status", "sec")
	cli(t, addr, writer.SecretID, "acl", "token", "self")
	cli(t, addr, doomed.SecretID, "alloc", "status", allocID)

	// Raw requests: a bearer token, a deleted token and an unknown one.
	get := func(path, header, value string) int {
		req, err := http.NewRequest(http.MethodGet, addr+path, nil)
		require.NoError(t, err)
		req.Header.Set(header, value)
		resp, err := http.DefaultClient.Do(req)
		require.NoError(t, err)
		_, _ = io.Copy(io.Discard, resp.Body)
		_ = resp.Body.Close()
		return resp.StatusCode
	}
	require.Equal(t, http.StatusOK, get("/v1/jobs", "Authorization", "Bearer "+chosen))
	cli(t, addr, mgmt, "acl", "token", "delete", doomed.AccessorID)
	require.Equal(t, http.StatusForbidden, get("/v1/jobs", api.TokenHeader, doomed.SecretID))
	require.Equal(t, http.StatusForbidden, get("/v1/jobs?index=1&wait=1s", api.TokenHeader, unknown))
	require.Equal(t, http.StatusForbidden, get("/v1/acl/tokens", "Authorization", "Bearer "+writer.SecretID))

	actors := cli(t, addr, mgmt, "actors", "-json")
	require.Contains(t, actors, allocID, "the actor tree has the allocation")
	// The last exec's log line marks the end of what the monitor must see.
	stdout.Reset()
	require.Equal(t, 0, allocExec([]string{"-address", addr, "-token", chosen, allocID, "/bin/true"}, nil, &stdout, &stderr), stderr.String())
	require.Eventually(t, func() bool { return strings.Contains(monitored.String(), "command=/bin/true") },
		10*time.Second, 10*time.Millisecond, "the monitor stream never got the last exec's line")
	cli(t, addr, mgmt, "job", "stop", "-detach", "sec")
	close(stop)

	files := dataDirText(t, a.DataDir())
	for what, s := range secrets {
		require.NotContains(t, logs.String(), s, "the %s secret is in the agent's log", what)
		require.NotContains(t, monitored.String(), s, "the %s secret is in the monitor stream", what)
		require.NotContains(t, actors, s, "the %s secret is in /v1/actors", what)
		for path, text := range files {
			require.NotContains(t, text, s, "the %s secret is in %s", what, path)
		}
	}
}

// dataDirText reads every regular file under dir (the raft log and
// snapshots, the client's state).
func dataDirText(t *testing.T, dir string) map[string]string {
	out := map[string]string{}
	require.NoError(t, filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil || !d.Type().IsRegular() {
			return nil
		}
		if b, err := os.ReadFile(path); err == nil {
			out[path] = string(b)
		}
		return nil
	}))
	return out
}
