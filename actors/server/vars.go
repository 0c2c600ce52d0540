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
	replyInWorker(ctx, m, s.spec.Vars,
		&messages.VarReadResponse{Error: messages.NewError(messages.CodeInternal, "this server reads no variables")})
}

// replyInWorker answers m with handle's answer, computed in a worker (the
// server actor goes on meanwhile), or with missing when this server has
// no handler.
func replyInWorker[M, R any](ctx actor.Context, m M, handle func(context.Context, M) R, missing R) {
	if handle == nil {
		ctx.Respond(missing)
		return
	}
	actors.Reply(ctx, func(c context.Context) any { return handle(c, m) })
}
