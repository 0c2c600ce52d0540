package actors

import (
	"time"

	"github.com/asynkron/protoactor-go/actor"
)

// SupervisorSpec says how a parent treats a failing child: restart it at
// most MaxRestarts times within Within, then stop it.
type SupervisorSpec struct {
	MaxRestarts int
	Within      time.Duration
}

// DefaultSupervision restarts a crashed actor up to 10 times a minute.
var DefaultSupervision = SupervisorSpec{MaxRestarts: 10, Within: time.Minute}

// Strategy turns the spec into protoactor's one-for-one strategy: a panic
// restarts only the child that panicked, which rebuilds itself from state.
func (s SupervisorSpec) Strategy() actor.SupervisorStrategy {
	return actor.NewOneForOneStrategy(s.MaxRestarts, s.Within, func(any) actor.Directive {
		return actor.RestartDirective
	})
}
