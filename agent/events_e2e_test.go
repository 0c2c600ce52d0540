package agent

import (
	"context"
	"testing"
	"time"

	nomad "github.com/hashicorp/nomad/api"
	"github.com/stretchr/testify/require"
)

// TestEventStreamFollowsJobRun: Nomad's client, following the Allocation
// topic for one job (its ID is a filter key) on a real agent, sees the
// job's allocation placed (PlanResult) and then running as the client
// reports it (AllocationUpdated), and nothing of another job.
func TestEventStreamFollowsJobRun(t *testing.T) {
	_, c := rawExecAgent(t)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	ch, err := c.EventStream().Stream(ctx, map[nomad.Topic][]string{nomad.TopicAllocation: {"watched"}}, 0, nil)
	require.NoError(t, err)
	_, _, err = c.Jobs().Register(rawExecJob("other", "sleep 100"), nil)
	require.NoError(t, err)
	_, _, err = c.Jobs().Register(rawExecJob("watched", "sleep 100"), nil)
	require.NoError(t, err)

	var types []string
	var last uint64
	for {
		select {
		case evs, ok := <-ch:
			require.True(t, ok, "stream closed")
			require.NoError(t, evs.Err)
			require.Greater(t, evs.Index, last, "indexes only grow")
			last = evs.Index
			for _, e := range evs.Events {
				a, err := e.Allocation()
				require.NoError(t, err)
				require.Equal(t, "watched", a.JobID)
				types = append(types, e.Type)
				if a.ClientStatus == nomad.AllocClientStatusRunning {
					require.Equal(t, "PlanResult", types[0])
					require.Equal(t, "AllocationUpdated", e.Type)
					return
				}
			}
		case <-ctx.Done():
			t.Fatalf("the watched job's allocation never ran; events: %v", types)
		}
	}
}
