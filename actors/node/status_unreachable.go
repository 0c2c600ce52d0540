package node

import (
	"fmt"
	"time"
)

// DescUnreachable describes a node that went disconnected or down because
// it failed the leader's direct probes after gossip reported it failed.
const DescUnreachable = "node failed direct probes after being reported failed"

// Unreachable says the node failed the leader's direct probes at At, with
// no heartbeat since they started (Suspicion's confirmation). It counts as
// a missed heartbeat, early: a ready node goes disconnected when its
// allocations have a disconnect window, else down; a node already
// disconnected or down is left as it is.
type Unreachable struct{ At time.Time }

func (Unreachable) isInput() {}

func (s *NodeStatus) onUnreachable(at time.Time) (Effects, error) {
	if at.IsZero() {
		return Effects{}, fmt.Errorf("%w: zero time", ErrInvalidStatusInput)
	}
	if s.status != StatusReady && s.status != StatusInitializing {
		return Effects{}, nil
	}
	eff, err := s.missed(at)
	if eff.NewStatus != "" {
		eff.StatusDescription = DescUnreachable
	}
	return eff, err
}
