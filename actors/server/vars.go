package server

import (
	"context"

	"github.com/asynkron/protoactor-go/actor"

	"github.com/troupe-dev/troupe/actors"
	"github.com/troupe-dev/troupe/messages"
)

// VarReader answers a client's read of variables for its templates from
// this server's replica (any server: variables are in raft), waiting for
// a newer index when the request asks (VarReadRequest.MinIndex). The
// agent implements it over its store and keyring.
type VarReader func(ctx context.Context, req *messages.VarReadRequest) *messages.VarReadResponse

// onVarRead answers a template's variable read in a worker: a blocking
// read may wait minutes and must not hold the server actor.
func (s *Actor) onVarRead(ctx actor.Context, m *messages.VarReadRequest) {
	if s.spec.Vars == nil {
		ctx.Respond(&messages.VarReadResponse{Error: messages.NewError(messages.CodeInternal, "this server reads no variables")})
		return
	}
	actors.Reply(ctx, func(c context.Context) any { return s.spec.Vars(c, m) })
}
