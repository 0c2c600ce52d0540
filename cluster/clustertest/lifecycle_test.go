package clustertest_test

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/troupe-dev/troupe/cluster/clustertest"
)

// childEnv makes TestChildScenario act out a scenario in a child test binary.
const childEnv = "CLUSTERTEST_CHILD"

var runIDLine = regexp.MustCompile(`clustertest: run (tt[0-9a-f]{4}),`)

// leftovers returns the lines of `ip netns list` and `ip -o link` that
// name a namespace, veth or bridge of run id.
func leftovers(t *testing.T, id string) []string {
	t.Helper()
	ours := regexp.MustCompile(`\b` + id + `(h\d+|v\d+|br)\b`)
	var left []string
	for _, args := range [][]string{{"netns", "list"}, {"-o", "link", "show"}} {
		out, err := exec.Command("ip", args...).CombinedOutput()
		require.NoError(t, err, "%s", out)
		for _, line := range strings.Split(string(out), "\n") {
			if ours.MatchString(line) {
				left = append(left, line)
			}
		}
	}
	return left
}

func TestCloseRemovesEverything(t *testing.T) {
	c := clustertest.New(t, 2)
	id := c.ID()
	require.NotEmpty(t, leftovers(t, id))
	p, _ := startEcho(t, c.Host(1))
	out, err := c.Host(0).Exec(context.Background(), "sh", "-c", "sleep 60 >/dev/null 2>&1 & echo $!")
	require.NoError(t, err)
	orphan, err := strconv.Atoi(strings.TrimSpace(string(out)))
	require.NoError(t, err)
	require.True(t, alive(orphan))

	require.NoError(t, c.Close())
	require.Empty(t, leftovers(t, id))
	require.True(t, p.Exited(), "Close must kill the processes")
	require.Eventually(t, func() bool { return !alive(orphan) }, 5*time.Second, 10*time.Millisecond,
		"Close must kill what runs in the hosts")
	_, err = c.Host(0).Start("late", "true")
	require.ErrorIs(t, err, clustertest.ErrClosed)
	_, err = c.Host(0).Exec(context.Background(), "true")
	require.ErrorIs(t, err, clustertest.ErrClosed)
	require.ErrorIs(t, c.Host(0).Partition(), clustertest.ErrClosed)
	require.NoError(t, c.Close(), "Close is idempotent")
}

func TestCleanupAtTestEnd(t *testing.T) {
	clustertest.RequireRoot(t)
	var id string
	var p *clustertest.Proc
	t.Run("uses a cluster", func(t *testing.T) {
		c := clustertest.New(t, 2)
		id = c.ID()
		p, _ = startEcho(t, c.Host(0))
	})
	require.NotEmpty(t, id)
	require.Empty(t, leftovers(t, id))
	require.True(t, p.Exited())
}

// TestChildScenario is run by other tests in a child test binary; it skips
// in a normal run.
func TestChildScenario(t *testing.T) {
	switch os.Getenv(childEnv) {
	case "panic":
		c := clustertest.New(t, 2)
		startEcho(t, c.Host(0))
		panic("child scenario panics")
	case "fail":
		c := clustertest.New(t, 2)
		startEcho(t, c.Host(0))
		t.Error("child scenario fails")
	case "crash":
		c := clustertest.New(t, 2)
		startEcho(t, c.Host(1))
		// An orphan without the parent-death signal, as a crashed agent's
		// task would leave behind.
		out, err := c.Host(0).Exec(context.Background(), "sh", "-c", "sleep 60 >/dev/null 2>&1 & echo $!")
		require.NoError(t, err)
		// A keeper inherits the run's lock, so the run stays live (and no
		// concurrent CleanupStale touches it) until the parent kills it.
		keeper := exec.Command("sleep", "60")
		keeper.ExtraFiles = []*os.File{c.LockFile()}
		require.NoError(t, keeper.Start())
		os.Stdout.WriteString("orphan " + strings.TrimSpace(string(out)) + "\n")
		os.Stdout.WriteString("keeper " + strconv.Itoa(keeper.Process.Pid) + "\n")
		os.Exit(3) // no cleanup: leaves the run behind
	default:
		t.Skip("only runs as a child of another test")
	}
}

// runChild runs TestChildScenario in a child test binary and returns its
// run id and output.
func runChild(t *testing.T, scenario string) (string, string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, exe, "-test.run=^TestChildScenario$", "-test.v")
	cmd.Env = append(os.Environ(), childEnv+"="+scenario)
	out, err := cmd.CombinedOutput()
	require.Error(t, err, "the child scenario must fail:\n%s", out)
	m := runIDLine.FindSubmatch(out)
	require.NotNil(t, m, "no run id in child output:\n%s", out)
	return string(m[1]), string(out)
}

func TestCleanupAfterFailure(t *testing.T) {
	clustertest.RequireRoot(t)
	for _, scenario := range []string{"fail", "panic"} {
		t.Run(scenario, func(t *testing.T) {
			id, out := runChild(t, scenario)
			require.Contains(t, out, "child scenario "+scenario+"s")
			require.Contains(t, out, "---- echo on host0", "a failed test prints the process logs")
			require.Regexp(t, `listening \d+`, out)
			require.Empty(t, leftovers(t, id))
			require.NoFileExists(t, "/run/troupe-clustertest/"+id+".lock")
		})
	}
}

func TestCleanupStale(t *testing.T) {
	clustertest.RequireRoot(t)
	live := clustertest.New(t, 1)
	id, out := runChild(t, "crash")
	orphan, keeper := pidAfter(t, out, "orphan"), pidAfter(t, out, "keeper")
	t.Cleanup(func() { _ = syscall.Kill(keeper, syscall.SIGKILL) })
	require.NotEmpty(t, leftovers(t, id), "the crashed child leaves its run behind")
	require.True(t, alive(orphan), "orphan %d should outlive the crashed child", orphan)

	_, err := clustertest.CleanupStale(context.Background())
	require.NoError(t, err)
	require.NotEmpty(t, leftovers(t, id), "a run whose lock is held is live and kept")
	require.True(t, alive(orphan))

	require.NoError(t, syscall.Kill(keeper, syscall.SIGKILL))
	require.Eventually(t, func() bool { return !alive(keeper) }, 5*time.Second, 10*time.Millisecond)
	decoy := id + "zz" // close to the pattern, but not ours
	require.NoError(t, exec.Command("ip", "netns", "add", decoy).Run())
	t.Cleanup(func() { _ = exec.Command("ip", "netns", "del", decoy).Run() })

	removed, err := clustertest.CleanupStale(context.Background())
	require.NoError(t, err)
	t.Logf("removed: %v", removed)
	require.Empty(t, leftovers(t, id))
	require.False(t, alive(orphan), "processes in a stale namespace are killed")
	require.FileExists(t, "/var/run/netns/"+decoy, "names outside the pattern are kept")
	for _, h := range live.Hosts() {
		require.FileExists(t, "/var/run/netns/"+h.NetNS, "a live run is kept")
		out, err := h.Exec(context.Background(), "uname", "-n")
		require.NoError(t, err)
		require.Equal(t, h.Name, strings.TrimSpace(string(out)))
	}
}

// pidAfter reads the pid the child printed after word.
func pidAfter(t *testing.T, out, word string) int {
	t.Helper()
	m := regexp.MustCompile(word + ` (\d+)`).FindStringSubmatch(out)
	require.NotNil(t, m, "no %s pid in child output:\n%s", word, out)
	pid, err := strconv.Atoi(m[1])
	require.NoError(t, err)
	return pid
}

// alive reports whether pid runs (a zombie counts as dead).
func alive(pid int) bool {
	stat, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return false
	}
	i := bytes.LastIndexByte(stat, ')')
	return i >= 0 && i+2 < len(stat) && stat[i+2] != 'Z'
}
