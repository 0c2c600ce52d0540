package e2e

import (
	"fmt"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	nomad "github.com/hashicorp/nomad/api"
	"github.com/stretchr/testify/require"
)

// periodicChildTimes are the launch times (unix seconds) of parent's
// children as a server lists them (?stale: any server answers), sorted.
func periodicChildTimes(c *nomad.Client, parent string) ([]int64, error) {
	jobs, _, err := c.Jobs().List(&nomad.QueryOptions{AllowStale: true})
	if err != nil {
		return nil, err
	}
	var out []int64
	for _, j := range jobs {
		if j.ParentID != parent {
			continue
		}
		sec, err := strconv.ParseInt(strings.TrimPrefix(j.ID, parent+"/periodic-"), 10, 64)
		if err != nil {
			return nil, fmt.Errorf("child %q is not named <parent>/periodic-<unix time>", j.ID)
		}
		out = append(out, sec)
	}
	sort.Slice(out, func(i, k int) bool { return out[i] < out[k] })
	return out, nil
}

// TestClusterPeriodicAcrossLeaderKill: a periodic job launching every 2
// seconds on 3 servers; the leader is killed with SIGKILL just after a
// launch, and the new leader carries on from the launch raft recorded.
// Every child is registered once (version 0, one evaluation), at a
// distinct cron time; the times missed during the election are launched
// at most once (the latest of them, as Nomad does), and launches go on
// every 2 seconds after it.
func TestClusterPeriodicAcrossLeaderKill(t *testing.T) {
	tc := startAgents(t, t.TempDir(), 3, 0)
	old := tc.leader(t)
	var follower *agentProc
	for _, s := range tc.servers {
		if s != old {
			follower = s
			break
		}
	}
	c := nomadClient(t, follower)
	job := parkedJob("tick") // its children park: no client runs them
	job.Periodic = &nomad.PeriodicConfig{Specs: []string{"*/2 * * * * * *"}}
	_, _, err := c.Jobs().Register(job, nil)
	require.NoError(t, err)

	var before []int64
	tc.eventually(t, settleTimeout, "two launches before the kill", func() (bool, string) {
		before, err = periodicChildTimes(c, "tick")
		return err == nil && len(before) >= 2, fmt.Sprintf("children %v, err %v", before, err)
	})
	old.Kill(t)
	killedAt := time.Now()

	var after []int64
	tc.eventually(t, formTimeout+10*time.Second, "three launches by the new leader", func() (bool, string) {
		after, err = periodicChildTimes(c, "tick")
		return err == nil && len(after) >= len(before)+3, fmt.Sprintf("children %v, err %v", after, err)
	})
	t.Logf("launches before the kill %v, after %v (killed at %d)", before, after, killedAt.Unix())
	require.Equal(t, before, after[:len(before)], "the launches before the kill are kept")
	for i, sec := range after {
		require.Zero(t, sec%2, "child %d launched at %d, not a cron time", i, sec)
		if i > 0 {
			require.Greater(t, sec, after[i-1], "launch times are distinct and increasing: %v", after)
		}
	}
	// Launches that fell while no leader existed collapse into one: after
	// the first launch of the new leader, none is skipped.
	var gaps int
	for i := 1; i < len(after); i++ {
		if after[i]-after[i-1] > 2 {
			gaps++
		}
	}
	require.LessOrEqual(t, gaps, 1, "only the election's missed launches are collapsed: %v", after)

	for _, sec := range after {
		id := "tick/periodic-" + strconv.FormatInt(sec, 10)
		child, _, err := c.Jobs().Info(id, &nomad.QueryOptions{AllowStale: true})
		require.NoError(t, err)
		require.Equal(t, uint64(0), *child.Version, "child %s registered once", id)
		evals, _, err := c.Jobs().Evaluations(id, &nomad.QueryOptions{AllowStale: true})
		require.NoError(t, err)
		launches := 0
		for _, ev := range evals { // a parked child's blocked evaluation is not a launch
			if ev.TriggeredBy == "periodic-job" {
				launches++
			}
		}
		require.Equal(t, 1, launches, "child %s launched once", id)
	}
}
