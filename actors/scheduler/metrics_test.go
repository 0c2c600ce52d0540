package scheduler

import (
	"testing"

	"github.com/stretchr/testify/require"
)

// TestBrokerStats: queued evaluations of a job with a plan in flight are
// pending, the others ready; the plans in flight are unacked; Stats
// carries the reading and a nil Stats reads zeroes.
func TestBrokerStats(t *testing.T) {
	a := &Actor{queued: map[string]string{}, perJob: map[string]int{}}
	for id, job := range map[string]string{"e1": "default/web", "e2": "default/web", "e3": "default/db"} {
		a.queueAdd(id, job)
		a.queue = append(a.queue, id)
	}
	a.flight.jobs = map[string]bool{"default/web": true, "default/batch": true}
	require.Equal(t, BrokerStats{Ready: 1, Pending: 2, Unacked: 2}, a.brokerStats())

	a.queueDrop("e1")
	a.queue = a.queue[1:]
	a.queueDrop("e1") // twice changes nothing
	require.Equal(t, map[string]int{"default/web": 1, "default/db": 1}, a.perJob)
	var s Stats
	s.store(a.brokerStats())
	require.Equal(t, BrokerStats{Ready: 1, Pending: 1, Unacked: 2}, s.Load())
	require.Equal(t, BrokerStats{}, (*Stats)(nil).Load())
}
