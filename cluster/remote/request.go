package remote

import (
	"context"
	"errors"
	"fmt"
	"reflect"
	"time"

	"github.com/asynkron/protoactor-go/actor"
	"google.golang.org/protobuf/proto"

	"github.com/troupe-dev/troupe/messages"
)

// PID addresses the actor named name on the agent at addr, e.g.
// PID("10.0.0.2:4647", "server"). addr must be the agent's advertised
// address.
func PID(addr, name string) *actor.PID {
	return actor.NewPID(addr, name)
}

// Request sends req to the actor named name at addr and waits for its
// reply, which must be a T. It waits until ctx's deadline when ctx has
// one (a slow call, such as a CSI controller attach, sets a long one),
// else at most the transport's RequestTimeout (DefaultRequestTimeout), and
// returns early when ctx is cancelled.
//
// Errors name addr and name, and wrap ErrTimeout, ErrUnreachable,
// ErrNoActor, ErrUnexpectedReply or ErrInvalidRequest/ErrNotStarted. A
// *messages.Error reply, or a T whose Error field is set, is returned as a
// *RemoteError (check with errors.As); in the latter case the reply is
// returned too.
func Request[T proto.Message](ctx context.Context, root *actor.RootContext, addr, name string, req proto.Message) (T, error) {
	var zero T
	reply, err := request(ctx, root, addr, name, req)
	if err != nil {
		return zero, err
	}
	if m, ok := reply.(*messages.Error); ok {
		return zero, ReplyError(m, addr, name)
	}
	v, ok := reply.(T)
	if !ok {
		return zero, fmt.Errorf("%w: %s/%s: want %s, got %T", ErrUnexpectedReply, addr, name, reflect.TypeFor[T](), reply)
	}
	if re := ReplyError(v, addr, name); re != nil {
		return v, re
	}
	return v, nil
}

// Send delivers msg to the actor named name at addr, fire-and-forget. It
// returns an error only for a bad argument or a system without remoting;
// delivery itself is not confirmed.
func Send(root *actor.RootContext, addr, name string, msg proto.Message) error {
	if err := check(root, addr, name, msg); err != nil {
		return err
	}
	root.Send(PID(addr, name), msg)
	return nil
}

func check(root *actor.RootContext, addr, name string, msg proto.Message) error {
	if root == nil {
		return fmt.Errorf("%w: %s/%s: nil root context", ErrNotStarted, addr, name)
	}
	if addr == "" || name == "" || msg == nil || reflect.ValueOf(msg).IsNil() {
		return fmt.Errorf("%w: address %q, actor %q, message %T", ErrInvalidRequest, addr, name, msg)
	}
	if _, err := transportOf(root.ActorSystem()); err != nil {
		return fmt.Errorf("%w: %s/%s", err, addr, name)
	}
	return nil
}

// request sends req and waits for the raw reply, classifying failures.
func request(ctx context.Context, root *actor.RootContext, addr, name string, req proto.Message) (any, error) {
	if err := check(root, addr, name, req); err != nil {
		return nil, err
	}
	t, _ := transportOf(root.ActorSystem())
	timeout, byCtx := t.timeout, false
	if dl, ok := ctx.Deadline(); ok {
		timeout, byCtx = time.Until(dl), true
	}
	if err := ctx.Err(); err != nil || timeout <= 0 {
		return nil, fmt.Errorf("%w: %s/%s: %w", ErrTimeout, addr, name, context.Cause(ctx))
	}
	f := requestFuture(root, PID(addr, name), req, timeout, tokenOf(ctx))
	reply, err := wait(ctx, root.ActorSystem(), f)
	if err == nil && reply != nil {
		return reply, nil
	}
	return nil, t.classify(ctx, err, addr, name, timeout, byCtx)
}

// requestFuture is root.RequestFuture, carrying the ACL token (when
// given) in the message's TokenHeader.
func requestFuture(root *actor.RootContext, pid *actor.PID, req proto.Message, timeout time.Duration, token string) *actor.Future {
	if token == "" {
		return root.RequestFuture(pid, req, timeout)
	}
	f := actor.NewFuture(root.ActorSystem(), timeout)
	root.Send(pid, &actor.MessageEnvelope{Header: map[string]string{TokenHeader: token}, Message: req, Sender: f.PID()})
	return f
}

// classify turns a future's failure into one of our errors. err is nil
// when ctx was cancelled (or its deadline passed) before the future
// resolved.
func (t *Transport) classify(ctx context.Context, err error, addr, name string, timeout time.Duration, byCtx bool) error {
	switch {
	case err == nil:
		return fmt.Errorf("%w: %s/%s: %w", ErrTimeout, addr, name, context.Cause(ctx))
	case t.isDown(addr):
		return fmt.Errorf("%w: %s (asking %s): %w", ErrUnreachable, addr, name, err)
	case errors.Is(err, actor.ErrDeadLetter):
		return fmt.Errorf("%w: %s/%s", ErrNoActor, addr, name)
	case byCtx:
		return fmt.Errorf("%w: %s/%s after %s: %w", ErrTimeout, addr, name, timeout.Round(time.Millisecond), context.DeadlineExceeded)
	default:
		return fmt.Errorf("%w: %s/%s after %s", ErrTimeout, addr, name, timeout.Round(time.Millisecond))
	}
}

// wait blocks until f resolves or ctx is cancelled; on cancel it completes
// the future (result nil, no error) so that nothing is left waiting.
func wait(ctx context.Context, sys *actor.ActorSystem, f *actor.Future) (any, error) {
	if ctx.Done() == nil {
		return f.Result()
	}
	type result struct {
		reply any
		err   error
	}
	done := make(chan result, 1)
	go func() {
		r, err := f.Result()
		done <- result{r, err}
	}()
	select {
	case r := <-done:
		return r.reply, r.err
	case <-ctx.Done():
		if p, ok := sys.ProcessRegistry.GetLocal(f.PID().Id); ok {
			p.Stop(f.PID())
		}
		r := <-done
		return r.reply, r.err
	}
}
