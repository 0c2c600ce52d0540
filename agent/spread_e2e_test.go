package agent

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"testing"

	nomad "github.com/hashicorp/nomad/api"
	"github.com/stretchr/testify/require"

	"github.com/troupe-dev/troupe/actors/scheduler"
	"github.com/troupe-dev/troupe/messages"
)

// TestSpreadAndAffinityThroughNomadsClient registers, with Nomad's own Go
// client, a job that spreads over ${meta.rack} on six simulated nodes in
// three racks and one with an affinity for a
// rack: the first is placed two per rack, the second on the rack it
// prefers, and each allocation's Metrics.ScoreMetaData comes back in
// Nomad's JSON shape with the scorers that placed it.
func TestSpreadAndAffinityThroughNomadsClient(t *testing.T) {
	a := startAgent(t, testConfig(t, t.TempDir()))
	defer a.Shutdown()
	c, err := nomad.NewClient(&nomad.Config{Address: "http://" + a.HTTPAddr()})
	require.NoError(t, err)
	rackOf := map[string]string{}
	for i, n := range scheduler.SimulatedNodes(6, 11) {
		n.Meta = map[string]string{"rack": fmt.Sprintf("r%d", i%3)}
		rackOf[n.ID] = n.Meta["rack"]
		_, _, err := a.Apply(context.Background(), &messages.Command{Cmd: &messages.Command_RegisterNode{
			RegisterNode: &messages.RegisterNode{Node: n}}})
		require.NoError(t, err)
	}
	racked := func(id string, count int) (*nomad.Job, *nomad.TaskGroup) {
		job := nomad.NewServiceJob(id, id, "global", 50)
		job.Constrain(nomad.NewConstraint("${meta.rack}", "is_set", "")) // the simulated nodes only
		tg := nomad.NewTaskGroup("g", count)
		tg.AddTask(nomad.NewTask("t", "exec").SetConfig("command", "/bin/true").
			Require(&nomad.Resources{CPU: ptr(100), MemoryMB: ptr(64)}))
		job.AddTaskGroup(tg)
		return job, tg
	}

	spread, tg := racked("spread", 6)
	tg.Spreads = []*nomad.Spread{nomad.NewSpread("${meta.rack}", 100, nil)}
	_, _, err = c.Jobs().Register(spread, nil)
	require.NoError(t, err)
	perRack := map[string]int{}
	for _, al := range waitPlaced(t, c, "spread", 6) {
		perRack[rackOf[al.NodeID]]++
	}
	require.Equal(t, map[string]int{"r0": 2, "r1": 2, "r2": 2}, perRack)

	affine, _ := racked("affine", 1)
	affine.Affinities = []*nomad.Affinity{nomad.NewAffinity("${meta.rack}", "=", "r2", 100)}
	_, _, err = c.Jobs().Register(affine, nil)
	require.NoError(t, err)
	placed := waitPlaced(t, c, "affine", 1)[0]
	require.Equal(t, "r2", rackOf[placed.NodeID])

	// Every allocation keeps its scores, its own node first; the job's
	// scorer shows on at least one of them (a spread boost of exactly 0,
	// all racks even, is left out of a node's scores as in Nomad).
	for job, scorer := range map[string]string{"spread": scheduler.ScoreSpread, "affine": scheduler.ScoreNodeAffinity} {
		scored := 0
		for _, al := range waitPlaced(t, c, job, 1) {
			full, _, err := c.Allocations().Info(al.ID, nil)
			require.NoError(t, err)
			meta := full.Metrics.ScoreMetaData
			require.NotEmpty(t, meta, "%s: no ScoreMetaData", job)
			require.Equal(t, al.NodeID, meta[0].NodeID, "%s: the chosen node scores best", job)
			require.Contains(t, meta[0].Scores, scheduler.ScoreBinPack)
			if _, ok := meta[0].Scores[scorer]; ok {
				scored++
			}
			for i := 1; i < len(meta); i++ {
				require.LessOrEqual(t, meta[i].NormScore, meta[i-1].NormScore, "%s: best first", job)
			}
			requireScoreJSON(t, a, al.ID)
		}
		require.Positive(t, scored, "%s: no allocation's scores name %s", job, scorer)
	}
}

// waitPlaced waits until n of the job's allocations are placed.
func waitPlaced(t *testing.T, c *nomad.Client, jobID string, n int) []*nomad.AllocationListStub {
	t.Helper()
	return waitAllocs(t, c, jobID, fmt.Sprintf("fewer than %d allocations placed", n),
		func(allocs []*nomad.AllocationListStub) bool { return len(allocs) >= n })
}

// requireScoreJSON reads the allocation as raw JSON: Metrics.ScoreMetaData
// is a list of {NodeID, Scores, NormScore}, spelled as Nomad spells them.
func requireScoreJSON(t *testing.T, a *Agent, allocID string) {
	t.Helper()
	resp, err := http.Get("http://" + a.HTTPAddr() + "/v1/allocation/" + allocID)
	require.NoError(t, err)
	defer resp.Body.Close()
	var raw struct {
		Metrics struct {
			ScoreMetaData []map[string]json.RawMessage
		}
	}
	require.NoError(t, json.NewDecoder(resp.Body).Decode(&raw))
	require.NotEmpty(t, raw.Metrics.ScoreMetaData)
	for _, m := range raw.Metrics.ScoreMetaData {
		require.Contains(t, m, "NodeID")
		require.Contains(t, m, "Scores")
		require.Contains(t, m, "NormScore")
	}
}
