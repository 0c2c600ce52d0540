package server

import (
	"context"

	"github.com/asynkron/protoactor-go/actor"

	"github.com/troupe-dev/troupe/actors"
	"github.com/troupe-dev/troupe/messages"
)

// ACLTokenResolver answers a client-only agent's token resolution from
// this server's replica (any server: ACLs are in raft). It only reads the
// state store: the actor answers it inline.
type ACLTokenResolver func(req *messages.ResolveACLTokenRequest) *messages.ResolveACLTokenResponse

func (s *Actor) onResolveACLToken(ctx actor.Context, m *messages.ResolveACLTokenRequest) {
	if s.spec.ACLTokens == nil {
		ctx.Respond(&messages.ResolveACLTokenResponse{Error: messages.NewError(messages.CodeInternal, "this server resolves no ACL tokens")})
		return
	}
	ctx.Respond(s.spec.ACLTokens(m))
}

// WorkloadIdentityResolver answers a client-only agent's check of a
// workload identity JWT from this server's keyring and allocations. The
// signature check is CPU work on every request a client serves: it runs
// in a worker, as signing does (onSignIdentities), not in the actor.
type WorkloadIdentityResolver func(req *messages.ResolveWorkloadIdentityRequest) *messages.ResolveWorkloadIdentityResponse

func (s *Actor) onResolveWorkloadIdentity(ctx actor.Context, m *messages.ResolveWorkloadIdentityRequest) {
	if s.spec.WorkloadIdentities == nil {
		ctx.Respond(&messages.ResolveWorkloadIdentityResponse{Error: messages.NewError(messages.CodeInternal, "this server checks no workload identities")})
		return
	}
	actors.Reply(ctx, func(context.Context) any { return s.spec.WorkloadIdentities(m) })
}
