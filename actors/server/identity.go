package server

import (
	"context"

	"github.com/asynkron/protoactor-go/actor"

	"github.com/troupe-dev/troupe/actors"
	"github.com/troupe-dev/troupe/messages"
)

// IdentitySigner signs the workload identities of the tasks of a client's
// allocation (any server: the keyring is in raft). The agent implements
// it over its store.
type IdentitySigner func(ctx context.Context, req *messages.SignIdentitiesRequest) *messages.SignIdentitiesResponse

// WorkloadVarReader answers a template's variable read made with its
// task's workload identity, within what the identity may read.
type WorkloadVarReader func(ctx context.Context, req *messages.IdentityVarReadRequest) *messages.VarReadResponse

// onSignIdentities signs in a worker, for a client that shows its node's
// secret: it may first commit the keyring's first root key.
func (s *Actor) onSignIdentities(ctx actor.Context, m *messages.SignIdentitiesRequest) {
	if s.spec.Identities == nil {
		ctx.Respond(&messages.SignIdentitiesResponse{Error: messages.NewError(messages.CodeInternal, "this server signs no identities")})
		return
	}
	if e := nodeSecretDenied(s.spec.State(), m.GetNodeID(), m.GetNodeSecretID()); e != nil {
		ctx.Respond(&messages.SignIdentitiesResponse{Error: e})
		return
	}
	actors.Reply(ctx, func(c context.Context) any { return s.spec.Identities(c, m) })
}

// onIdentityVarRead answers in a worker, as onVarRead (a blocking read
// may wait minutes), for a client that shows its node's secret.
func (s *Actor) onIdentityVarRead(ctx actor.Context, m *messages.IdentityVarReadRequest) {
	if s.spec.WorkloadVars == nil {
		ctx.Respond(&messages.VarReadResponse{Error: messages.NewError(messages.CodeInternal, "this server reads no variables")})
		return
	}
	if e := nodeSecretDenied(s.spec.State(), m.GetNodeID(), m.GetNodeSecretID()); e != nil {
		ctx.Respond(&messages.VarReadResponse{Error: e})
		return
	}
	actors.Reply(ctx, func(c context.Context) any { return s.spec.WorkloadVars(c, m) })
}
