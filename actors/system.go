package actors

import (
	"log/slog"

	"github.com/asynkron/protoactor-go/actor"
)

// System is a protoactor system plus troupe's actor registry.
type System struct {
	*actor.ActorSystem
	Registry *Registry
	Logger   *slog.Logger
}

// NewSystem creates an actor system that logs through logger (protoactor is
// loud by default: it gets troupe's logger and level, nothing else).
func NewSystem(logger *slog.Logger) *System {
	if logger == nil {
		logger = slog.New(slog.DiscardHandler)
	}
	cfg := actor.Configure(
		actor.WithLoggerFactory(func(*actor.ActorSystem) *slog.Logger {
			return logger.With("component", "protoactor")
		}),
		actor.WithDeadLetterThrottleCount(3),
	)
	return &System{
		ActorSystem: actor.NewActorSystemWithConfig(cfg),
		Registry:    NewRegistry(),
		Logger:      logger,
	}
}

// Props returns props for one actor of the given kind. Call it once per
// spawn: the props carry that actor's mailbox counter.
func (s *System) Props(kind string, producer actor.Producer, opts ...actor.PropsOption) *actor.Props {
	return s.Registry.Props(kind, producer, opts...)
}

// Tree returns the live actor tree.
func (s *System) Tree() []*Info {
	return s.Registry.Tree(s.ActorSystem)
}

// Shutdown stops the system.
func (s *System) Shutdown() {
	s.ActorSystem.Shutdown()
}
