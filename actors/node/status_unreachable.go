package node

import (
	"fmt"
	"time"
)

// descUnreachable describes a node that went disconnected or down because
// it failed the leader's direct probes after gossip reported it failed.
const descUnreachable = "node failed direct probes after being reported failed"

// unreachable says the node failed the leader's direct probes at At, with
// no heartbeat since they started (Suspicion's confirmation). It counts as
// a missed heartbeat, early: a ready node goes disconnected when its
// allocations have a disconnect window, else down; a node already
// disconnected or down is left as it is.
type unreachable struct{ At time.Time }

func (unreachable) isInput() {}

func (s *nodeStatus) onUnreachable(at time.Time) (effects, error) {
	if at.IsZero() {
		return effects{}, fmt.Errorf("%w: zero time", errInvalidStatusInput)
	}
	if s.status != statusReady && s.status != statusInitializing {
		return effects{}, nil
	}
	eff, err := s.missed(at)
	if eff.NewStatus != "" {
		eff.StatusDescription = descUnreachable
	}
	return eff, err
}
