package remote

import (
	"context"
	"log/slog"

	"github.com/asynkron/protoactor-go/actor"
)

// QuietLogger returns a logger for protoactor's own output: its Info lines
// (every connect, stream close, endpoint start/stop, dead letter) are
// demoted to Debug; Warn and Error pass through at their level. protoactor
// remote logs through the actor system's logger, which is fixed when the
// system is created, so use LoggerFactory in actor.WithLoggerFactory.
func QuietLogger(logger *slog.Logger) *slog.Logger {
	if logger == nil {
		return slog.New(slog.DiscardHandler)
	}
	return slog.New(quietHandler{logger.Handler()})
}

// LoggerFactory is an actor.WithLoggerFactory argument that sends
// protoactor's output through logger, tagged component=protoactor, with
// its Info lines demoted to Debug (see QuietLogger).
func LoggerFactory(logger *slog.Logger) func(*actor.ActorSystem) *slog.Logger {
	return func(*actor.ActorSystem) *slog.Logger {
		return QuietLogger(logger).With("component", "protoactor")
	}
}

// quietHandler demotes Info records to Debug.
type quietHandler struct{ h slog.Handler }

func demote(l slog.Level) slog.Level {
	if l == slog.LevelInfo {
		return slog.LevelDebug
	}
	return l
}

func (q quietHandler) Enabled(ctx context.Context, l slog.Level) bool {
	return q.h.Enabled(ctx, demote(l))
}

func (q quietHandler) Handle(ctx context.Context, r slog.Record) error {
	r.Level = demote(r.Level)
	return q.h.Handle(ctx, r)
}

func (q quietHandler) WithAttrs(as []slog.Attr) slog.Handler {
	return quietHandler{q.h.WithAttrs(as)}
}

func (q quietHandler) WithGroup(name string) slog.Handler {
	return quietHandler{q.h.WithGroup(name)}
}
