package httpapi

import (
	"context"
	"net/http/httptest"
	"sync"
	"testing"

	nomad "github.com/hashicorp/nomad/api"
	"github.com/hashicorp/raft"
	"github.com/stretchr/testify/require"
	"google.golang.org/protobuf/proto"

	"github.com/troupe-dev/troupe/cluster/state"
	"github.com/troupe-dev/troupe/messages"
)

// fsmBackend applies commands straight to an FSM, as a single server's
// raft would: the API runs against the real state and its checks.
type fsmBackend struct {
	fakeBackend
	fsm   *state.FSM
	mu    sync.Mutex
	index uint64
}

func newFSMBackend() *fsmBackend { return &fsmBackend{fsm: state.NewFSM(state.NewStore(), nil)} }

func (b *fsmBackend) Store() *state.Store { return b.fsm.Store() }

func (b *fsmBackend) Apply(_ context.Context, cmd *messages.Command) (any, uint64, error) {
	data, err := proto.Marshal(cmd)
	if err != nil {
		return nil, 0, err
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	b.index++
	res := b.fsm.Apply(&raft.Log{Index: b.index, Type: raft.LogCommand, Data: data})
	if err, ok := res.(error); ok {
		return nil, b.index, err
	}
	return res, b.index, nil
}

// mustApply commits cmd, failing the test on a refusal.
func (b *fsmBackend) mustApply(t *testing.T, cmd *messages.Command) {
	t.Helper()
	_, _, err := b.Apply(context.Background(), cmd)
	require.NoError(t, err)
}

// nomadAgainst serves the API on b and returns Nomad's client for it.
func nomadAgainst(t *testing.T, b Backend) *nomad.Client {
	t.Helper()
	srv := httptest.NewServer(New(b, nil, Options{}))
	t.Cleanup(srv.Close)
	c, err := nomad.NewClient(&nomad.Config{Address: srv.URL})
	require.NoError(t, err)
	return c
}
