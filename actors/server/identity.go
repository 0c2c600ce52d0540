package server

import (
	"context"

	"github.com/asynkron/protoactor-go/actor"

	"github.com/troupe-dev/troupe/messages"
)

// IdentitySigner signs the workload identities of the tasks of a client's
// allocation (any server: the keyring is in raft). The agent implements
// it over its store.
type IdentitySigner func(ctx context.Context, req *messages.SignIdentitiesRequest) *messages.SignIdentitiesResponse

// WorkloadVarReader answers a template's variable read made with its
// task's workload identity, within what the identity may read.
type WorkloadVarReader func(ctx context.Context, req *messages.IdentityVarReadRequest) *messages.VarReadResponse

// onSignIdentities signs in a worker: it may first commit the keyring's
// first root key.
func (s *Actor) onSignIdentities(ctx actor.Context, m *messages.SignIdentitiesRequest) {
	replyInWorker(ctx, m, s.spec.Identities,
		&messages.SignIdentitiesResponse{Error: messages.NewError(messages.CodeInternal, "this server signs no identities")})
}

// onIdentityVarRead answers in a worker, as onVarRead: a blocking read
// may wait minutes.
func (s *Actor) onIdentityVarRead(ctx actor.Context, m *messages.IdentityVarReadRequest) {
	replyInWorker(ctx, m, s.spec.WorkloadVars,
		&messages.VarReadResponse{Error: messages.NewError(messages.CodeInternal, "this server reads no variables")})
}
