package agent

import (
	"fmt"
	"testing"

	"github.com/asynkron/protoactor-go/actor"
	"github.com/stretchr/testify/require"

	"github.com/troupe-dev/troupe/cluster/remote"
)

// TestUndelivered: only a forward the transport dead-lettered is sent
// again; a timeout may hide a commit.
func TestUndelivered(t *testing.T) {
	addr := "10.0.0.1:4647"
	for _, tc := range []struct {
		name string
		err  error
		want bool
	}{
		{"dead leader, dead-lettered", fmt.Errorf("agent: forward to leader %s: %w", addr,
			fmt.Errorf("%w: %s (asking server): %w", remote.ErrUnreachable, addr, actor.ErrDeadLetter)), true},
		{"no server actor", fmt.Errorf("%w: %s/server", remote.ErrNoActor, addr), true},
		{"unreachable after a timeout", fmt.Errorf("%w: %s (asking server): %w", remote.ErrUnreachable, addr,
			actor.ErrTimeout), false},
		{"timeout", fmt.Errorf("%w: %s/server after 10s", remote.ErrTimeout, addr), false},
		{"refused by the leader", &remote.RemoteError{Code: remote.CodeInvalid, Message: "bad"}, false},
		{"nil", nil, false},
	} {
		t.Run(tc.name, func(t *testing.T) { require.Equal(t, tc.want, undelivered(tc.err)) })
	}
}
