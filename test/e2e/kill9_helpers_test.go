package e2e

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/troupe-dev/troupe/api"
	"github.com/troupe-dev/troupe/messages"
)

// Bounds of the kill -9 tests.
const (
	k9Ready   = 60 * time.Second // an agent (re)starts: raft leader, ready node
	k9Settle  = 60 * time.Second // allocations run or stop, claims are freed
	k9Poll    = 100 * time.Millisecond
	k9ExitMax = 30 * time.Second // a graceful stop
)

// k9Agent is `troupe agent -server -client` on a persistent data dir (not
// -dev, whose state dies with it), started in its own process group so
// that the test can SIGKILL it; the executors of its tasks are setsid'd
// and live on. Each start appends to the same log (under
// $TROUPE_E2E_LOG_DIR when set, else in the test's directory).
type k9Agent struct {
	dir  string   // the test's directory: every process of the test names it on its command line
	addr string   // host:port of the HTTP API
	argv []string // the whole command line, a wrapper (nsenter) first
	log  string
	api  *api.Client
	cmd  *exec.Cmd
	done chan struct{} // closed once cmd has exited
}

// newK9Agent prepares an agent on dir/data; start runs it. wrap prefixes
// the command line. Its cleanup (for a test that failed midway) stops the
// jobs and the agent, then kills what is left of the test's processes.
func newK9Agent(t *testing.T, dir, addr string, wrap []string, extra ...string) *k9Agent {
	t.Helper()
	argv := append(slices.Clone(wrap), troupeBin, "agent", "-server", "-client",
		"-data-dir", filepath.Join(dir, "data"), "-http-addr", addr, "-node", "kill9",
		"-plugin-probe-interval", "200ms", "-log-level", "debug",
		// Never the host's containerd: the start-up cleanup would collect
		// other agents' containers.
		"-containerd-address", filepath.Join(dir, "no-containerd.sock"))
	c, err := api.NewClient(&api.Config{Address: "http://" + addr, HTTPClient: &http.Client{Timeout: requestTimeout}})
	require.NoError(t, err)
	log := filepath.Join(dir, "agent.log")
	if root := os.Getenv(logDirEnv); root != "" { // kept after the test
		require.NoError(t, os.MkdirAll(root, 0o755))
		f, err := os.CreateTemp(root, t.Name()+"-*.log")
		require.NoError(t, err)
		log = f.Name()
		require.NoError(t, f.Close())
	}
	a := &k9Agent{dir: dir, addr: addr, argv: append(argv, extra...), log: log, api: c}
	t.Cleanup(func() { a.cleanup(t) })
	return a
}

// start runs the agent and waits until it has a raft leader and a ready
// node (after a restart the node may read ready from the old state: tests
// wait for what proves the new process took over).
func (a *k9Agent) start(t *testing.T) {
	t.Helper()
	f, err := os.OpenFile(a.log, os.O_WRONLY|os.O_CREATE|os.O_APPEND, 0o644)
	require.NoError(t, err)
	defer f.Close()
	fmt.Fprintf(f, "=== %s start\n", time.Now().Format(time.RFC3339Nano))
	cmd := exec.Command(a.argv[0], a.argv[1:]...)
	cmd.Stdout, cmd.Stderr = f, f
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
	require.NoError(t, cmd.Start())
	a.cmd, a.done = cmd, make(chan struct{})
	go func(done chan struct{}) { _ = cmd.Wait(); close(done) }(a.done)
	require.Eventually(t, func() bool {
		if a.exited() {
			return true
		}
		leader, err := a.api.Status().Leader()
		if err != nil || leader == "" {
			return false
		}
		nodes, _, err := a.api.Nodes().List(nil)
		return err == nil && len(nodes) == 1 && nodes[0].Status == "ready"
	}, k9Ready, k9Poll, "the agent never had a leader and a ready node")
	require.False(t, a.exited(), "the agent exited at start: %v", cmd.ProcessState)
}

func (a *k9Agent) exited() bool {
	select {
	case <-a.done:
		return true
	default:
		return false
	}
}

func (a *k9Agent) wait(timeout time.Duration) bool {
	select {
	case <-a.done:
		return true
	case <-time.After(timeout):
		return false
	}
}

// kill9 SIGKILLs the agent process: no shutdown, nothing flushed.
func (a *k9Agent) kill9(t *testing.T) {
	t.Helper()
	require.NoError(t, a.cmd.Process.Signal(syscall.SIGKILL))
	require.True(t, a.wait(10*time.Second), "the agent outlived SIGKILL")
	ws := a.cmd.ProcessState.Sys().(syscall.WaitStatus)
	require.True(t, ws.Signaled() && ws.Signal() == syscall.SIGKILL, "%v", a.cmd.ProcessState)
}

// stop is the graceful stop: SIGTERM, and the agent exits 0.
func (a *k9Agent) stop(t *testing.T) {
	t.Helper()
	require.NoError(t, a.cmd.Process.Signal(syscall.SIGTERM))
	require.True(t, a.wait(k9ExitMax), "the agent did not stop within %s of SIGTERM", k9ExitMax)
	require.Equal(t, 0, a.cmd.ProcessState.ExitCode(), "%v", a.cmd.ProcessState)
}

// troupe runs the CLI against the agent and requires exit code 0.
func (a *k9Agent) troupe(t *testing.T, args ...string) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), cliTimeout)
	defer cancel()
	argv := append([]string{args[0], args[1], "-address", "http://" + a.addr}, args[2:]...)
	out, err := exec.CommandContext(ctx, troupeBin, argv...).CombinedOutput()
	require.NoError(t, err, "troupe %v: %s", argv, out)
	return string(out)
}

// register parses and registers an HCL job and returns its ID.
func (a *k9Agent) register(t *testing.T, hcl string) string {
	t.Helper()
	job, err := a.api.Jobs().ParseHCL(hcl, true)
	require.NoError(t, err, hcl)
	_, _, err = a.api.Jobs().Register(job, nil)
	require.NoError(t, err)
	return job.GetID()
}

// waitAlloc waits until the job has one allocation and ok holds for it.
func (a *k9Agent) waitAlloc(t *testing.T, jobID, what string, ok func(*messages.Allocation) bool) *messages.Allocation {
	t.Helper()
	var al *messages.Allocation
	seen := "no allocation"
	require.Eventually(t, func() bool {
		stubs, _, err := a.api.Jobs().Allocations(jobID, nil)
		if err != nil || len(stubs) != 1 {
			seen = fmt.Sprintf("%d allocations (%v)", len(stubs), err)
			return false
		}
		got, _, err := a.api.Allocations().Info(stubs[0].ID, nil)
		if err != nil {
			return false
		}
		al = got
		seen = fmt.Sprintf("%s/%s: %s", got.GetDesiredStatus(), got.GetClientStatus(), got.GetClientDescription())
		return ok(got)
	}, k9Settle, k9Poll, "allocation of %s never %s; last seen %s", jobID, what, seen)
	return al
}

// stopJob deregisters a job and waits until its allocation is terminal.
func (a *k9Agent) stopJob(t *testing.T, jobID string) {
	t.Helper()
	_, _, err := a.api.Jobs().Deregister(jobID, false, nil)
	require.NoError(t, err)
	a.waitAlloc(t, jobID, "stopped", terminal)
}

// terminal reports whether the allocation has stopped for good.
func terminal(al *messages.Allocation) bool { return terminalStatus(al.GetClientStatus()) }

func terminalStatus(clientStatus string) bool {
	return slices.Contains([]string{"complete", "failed", "lost"}, clientStatus)
}

// hasActor reports whether the agent's live actor tree has an actor whose
// path contains every part (the actors of the running process, never
// replicated state).
func (a *k9Agent) hasActor(parts ...string) bool {
	tree, err := a.api.Actors().Tree("")
	if err != nil {
		return false
	}
	for _, ac := range tree.Actors {
		if !slices.ContainsFunc(parts, func(p string) bool { return !strings.Contains(ac.Path, p) }) {
			return true
		}
	}
	return false
}

// cleanup runs last: for a test that failed midway it stops the jobs and
// the agent gracefully; then it kills the test's leftover processes and
// prints the log of a failed test.
func (a *k9Agent) cleanup(t *testing.T) {
	if a.cmd != nil && !a.exited() {
		if jobs, _, err := a.api.Jobs().List(nil); err == nil {
			for _, j := range jobs {
				_, _, _ = a.api.Jobs().Deregister(j.ID, false, nil)
			}
			deadline := time.Now().Add(30 * time.Second)
			for !a.allStopped() && time.Now().Before(deadline) {
				<-time.After(k9Poll) // cleanup of a failed test: no condition left to assert
			}
		}
		_ = a.cmd.Process.Signal(syscall.SIGTERM)
		if !a.wait(k9ExitMax) {
			_ = a.cmd.Process.Kill()
			a.wait(10 * time.Second)
		}
	}
	for pid, cmdline := range leftovers(a.dir) {
		t.Logf("killing leftover process %d: %s", pid, cmdline)
		_ = syscall.Kill(pid, syscall.SIGKILL)
	}
	if t.Failed() {
		b, _ := os.ReadFile(a.log)
		t.Logf("agent log %s (tail):\n%s", a.log, tail(string(b), 400))
	}
}

// allStopped reports whether every allocation is terminal.
func (a *k9Agent) allStopped() bool {
	stubs, _, err := a.api.Allocations().List(nil)
	if err != nil {
		return false
	}
	for _, s := range stubs {
		if !terminalStatus(s.ClientStatus) {
			return false
		}
	}
	return true
}

// leftovers are the processes, other than this one, whose command line
// names dir: executors, tasks, the plugin, the agent.
func leftovers(dir string) map[int]string {
	out := map[int]string{}
	paths, _ := filepath.Glob("/proc/[0-9]*/cmdline")
	for _, p := range paths {
		b, err := os.ReadFile(p)
		if err != nil || !bytes.Contains(b, []byte(dir+"/")) {
			continue
		}
		pid, err := strconv.Atoi(filepath.Base(filepath.Dir(p)))
		if err != nil || pid == os.Getpid() {
			continue
		}
		out[pid] = string(bytes.ReplaceAll(bytes.TrimRight(b, "\x00"), []byte{0}, []byte{' '}))
	}
	return out
}

// requireNoLeftovers waits until no process of the test is left.
func requireNoLeftovers(t *testing.T, dir string) {
	t.Helper()
	var left map[int]string
	require.Eventually(t, func() bool { left = leftovers(dir); return len(left) == 0 },
		10*time.Second, k9Poll, "processes outlived their jobs and the agent: %v", left)
}

// alive reports whether pid runs (not a zombie) with name in its command line.
func alive(pid int, name string) bool {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/cmdline", pid))
	return err == nil && bytes.Contains(b, []byte(name))
}

// httpGet fetches http://addr/ until it answers 200 and returns the body.
func httpGet(t *testing.T, addr string) string {
	t.Helper()
	var body, last string
	require.Eventually(t, func() bool {
		var err error
		body, err = getOnce(addr)
		last = fmt.Sprint(err)
		return err == nil
	}, 20*time.Second, k9Poll, "http://%s/ never answered: %s", addr, last)
	return body
}

func getOnce(addr string) (string, error) {
	c := &http.Client{Timeout: time.Second}
	resp, err := c.Get("http://" + addr + "/")
	if err != nil {
		return "", err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err == nil && resp.StatusCode != http.StatusOK {
		err = errors.New(resp.Status)
	}
	return strings.TrimSpace(string(b)), err
}

// run runs a command of the host's tools and requires success.
func run(t *testing.T, name string, args ...string) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
	defer cancel()
	out, err := exec.CommandContext(ctx, name, args...).CombinedOutput()
	require.NoError(t, err, "%s %v: %s", name, args, out)
	return string(out)
}

// privateRunDirs pins a mount namespace (dir/mntns/ns, for nsenter
// --mount) in which dir/netns and dir/cni are /run/netns and /run/cni,
// the agent's netns and host-local IPAM directories: `troupe agent` has
// no flag for them, and agents that share them collect each other's
// namespaces and reservations (the start-up GC removes every one that is
// not its own).
func privateRunDirs(t *testing.T, dir string) string {
	t.Helper()
	pinDir, netns, cni := filepath.Join(dir, "mntns"), filepath.Join(dir, "netns"), filepath.Join(dir, "cni")
	for _, d := range []string{pinDir, netns, cni} {
		require.NoError(t, os.MkdirAll(d, 0o755))
	}
	// The mount points must exist; a /run/cni made here (empty) goes again.
	_, err := os.Stat("/run/cni")
	madeCNI := errors.Is(err, os.ErrNotExist)
	require.NoError(t, os.MkdirAll("/run/cni", 0o755))
	require.NoError(t, os.MkdirAll("/run/netns", 0o755))
	// unshare --mount=FILE pins onto a file whose mount does not propagate.
	run(t, "mount", "--bind", pinDir, pinDir)
	pin := filepath.Join(pinDir, "ns")
	t.Cleanup(func() {
		_ = syscall.Unmount(pin, syscall.MNT_DETACH)
		_ = syscall.Unmount(pinDir, syscall.MNT_DETACH)
		if madeCNI {
			_ = os.Remove("/run/cni")
		}
	})
	run(t, "mount", "--make-private", pinDir)
	require.NoError(t, os.WriteFile(pin, nil, 0o600))
	run(t, "unshare", "--mount="+pin, "--propagation", "private", "--", "sh", "-c",
		`mount --bind "$0" /run/netns && mount --bind "$1" /run/cni`, netns, cni)
	return pin
}
