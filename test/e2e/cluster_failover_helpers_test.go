package e2e

import (
	"errors"
	"fmt"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	nomad "github.com/hashicorp/nomad/api"
	"github.com/stretchr/testify/require"

	troupeapi "github.com/troupe-dev/troupe/api"
)

// Bounds of the failover scenario.
const (
	// staleBound is how long a ?stale read may take: it answers from the
	// server's own replica, whatever the leader does.
	staleBound = time.Second
	// contactBound is the most X-Nomad-LastContact a follower may show
	// while it follows a live leader (heartbeats come every ~50 ms with
	// -raft-timeout 500ms).
	contactBound = time.Second
	failoverPoll = 25 * time.Millisecond
)

// nomadClient is Nomad's own Go client for agent a.
func nomadClient(t *testing.T, a *agentProc) *nomad.Client {
	t.Helper()
	c, err := nomad.NewClient(&nomad.Config{Address: a.HTTPAddr(), HttpClient: &http.Client{Timeout: 2 * requestTimeout}})
	require.NoError(t, err)
	return c
}

// parkedJob is a batch job no node can run (there is no client and its
// datacenter does not exist): it stays registered, pending.
func parkedJob(id string) *nomad.Job {
	job := nomad.NewBatchJob(id, id, "global", 50)
	job.Datacenters = []string{"nowhere"}
	task := nomad.NewTask("t", "exec").SetConfig("command", "/bin/true")
	job.AddTaskGroup(nomad.NewTaskGroup("g", 1).AddTask(task))
	return job
}

// isNoLeader says whether err is Nomad's answer to a request that found
// no leader within the hold timeout: 500 "No cluster leader".
func isNoLeader(err error) bool {
	var ue nomad.UnexpectedResponseError
	if errors.As(err, &ue) {
		return ue.StatusCode() == http.StatusInternalServerError && strings.TrimSpace(ue.Body()) == troupeapi.NoLeaderBody
	}
	return err != nil && strings.Contains(err.Error(), "500") && strings.Contains(err.Error(), troupeapi.NoLeaderBody)
}

// isRefused says whether err is a connection refused: an agent whose HTTP
// listener is not up yet.
func isRefused(err error) bool {
	var op *net.OpError
	return errors.As(err, &op) && op.Op == "dial"
}

// readOutcome is what a run of default reads of one job saw.
type readOutcome struct {
	noLeader, refused int           // 500 "No cluster leader" answers, refused connections
	took              time.Duration // until the first answer with the job
	err               error         // an answer that is neither (a 404, an empty list, a 502...)
}

// readUntilAnswered sends default (consistent) reads of job id and of the
// jobs list to c, one after the other, until both answer with the job.
// Each answer must be the job (or a list holding it), 500 "No cluster
// leader", or, when refusedOK, a refused connection; anything else (a 404
// or an empty list above all) ends the run with err. Bounded by timeout.
func readUntilAnswered(c *nomad.Client, id string, refusedOK bool, timeout time.Duration) readOutcome {
	var out readOutcome
	start := time.Now()
	deadline := start.Add(timeout)
	tick := time.NewTicker(failoverPoll)
	defer tick.Stop()
	gotJob, gotList := false, false
	for !gotJob || !gotList {
		if time.Now().After(deadline) {
			out.err = fmt.Errorf("no answer with job %q after %s (%d no-leader answers, %d refused)", id, timeout, out.noLeader, out.refused)
			return out
		}
		var err error
		if !gotJob {
			var j *nomad.Job
			if j, _, err = c.Jobs().Info(id, nil); err == nil {
				if j.ID == nil || *j.ID != id {
					out.err = fmt.Errorf("GET /v1/job/%s answered job %v", id, j.ID)
					return out
				}
				gotJob = true
			}
		} else {
			var list []*nomad.JobListStub
			if list, _, err = c.Jobs().List(nil); err == nil {
				if !hasJob(list, id) {
					out.err = fmt.Errorf("GET /v1/jobs answered %d jobs, without %q", len(list), id)
					return out
				}
				gotList = true
			}
		}
		switch {
		case err == nil:
		case isNoLeader(err):
			out.noLeader++
		case refusedOK && isRefused(err):
			out.refused++
		default:
			out.err = err
			return out
		}
		if !gotJob || !gotList {
			<-tick.C
		}
	}
	out.took = time.Since(start)
	return out
}

func hasJob(list []*nomad.JobListStub, id string) bool {
	for _, j := range list {
		if j.ID == id {
			return true
		}
	}
	return false
}

// staleSample is one ?stale read's answer headers.
type staleSample struct {
	at          time.Duration // since the kill
	known       bool
	lastContact time.Duration
	leader      string // what /v1/status/leader on the same server said right after ("" for none)
}

func (s staleSample) String() string {
	return fmt.Sprintf("%4dms known=%-5v contact=%4dms leader=%q", s.at.Milliseconds(), s.known, s.lastContact.Milliseconds(), s.leader)
}

// sampleStale reads job id with ?stale from c, then asks c for the
// leader, every failoverPoll, until c names a leader other than old. Each
// stale read must answer the job within staleBound. It returns the
// samples, the last one naming the new leader.
func sampleStale(t *testing.T, c *nomad.Client, id, old string, since time.Time, timeout time.Duration) []staleSample {
	t.Helper()
	var samples []staleSample
	deadline := time.Now().Add(timeout)
	tick := time.NewTicker(failoverPoll)
	defer tick.Stop()
	for {
		start := time.Now()
		j, meta, err := c.Jobs().Info(id, &nomad.QueryOptions{AllowStale: true})
		took := time.Since(start)
		require.NoError(t, err, "a ?stale read on a follower while the leader is gone")
		require.Equal(t, id, *j.ID)
		require.Less(t, took, staleBound, "a ?stale read must answer at once")
		s := staleSample{at: time.Since(since), known: meta.KnownLeader, lastContact: meta.LastContact}
		s.leader, err = c.Status().Leader()
		if err != nil {
			require.True(t, isNoLeader(err), "/v1/status/leader without a leader: %v", err)
		}
		samples = append(samples, s)
		if s.leader != "" && s.leader != old {
			return samples
		}
		require.False(t, time.Now().After(deadline), "no new leader after %s; samples:\n%s", timeout, describeSamples(samples))
		<-tick.C
	}
}

func describeSamples(samples []staleSample) string {
	lines := make([]string, 0, len(samples))
	for _, s := range samples {
		lines = append(lines, s.String())
	}
	return strings.Join(lines, "\n")
}

// leaderAgreed says whether every server in servers names the same
// leader, one of them, in /v1/status/leader, and whether each one's
// /v1/agent/members tags exactly that member leader (its Addr and "port"
// tag make the address /v1/status/leader names, as Nomad's `server
// members` matches them); else what differs.
func leaderAgreed(t *testing.T, servers []*agentProc) (string, bool, string) {
	t.Helper()
	leader := ""
	for _, s := range servers {
		l, err := nomadClient(t, s).Status().Leader()
		if err != nil {
			return "", false, fmt.Sprintf("%s: status/leader: %v", s.Name, err)
		}
		if leader != "" && l != leader {
			return "", false, fmt.Sprintf("%s names %q, another %q", s.Name, l, leader)
		}
		leader = l
	}
	found := false
	for _, s := range servers {
		found = found || s.RaftAddr() == leader
	}
	if !found {
		return "", false, fmt.Sprintf("leader %q is none of the live servers", leader)
	}
	for _, s := range servers {
		members, err := nomadClient(t, s).Agent().Members()
		if err != nil {
			return "", false, fmt.Sprintf("%s: members: %v", s.Name, err)
		}
		var tagged []string
		for _, m := range members.Members {
			if m.Tags["leader"] == "true" {
				tagged = append(tagged, net.JoinHostPort(m.Addr, m.Tags["port"]))
			}
		}
		if len(tagged) != 1 || tagged[0] != leader {
			return "", false, fmt.Sprintf("%s: members tagged leader %v, status/leader %q", s.Name, tagged, leader)
		}
	}
	return leader, true, ""
}
