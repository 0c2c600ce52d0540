package server

import (
	"testing"

	"go.uber.org/goleak"
)

// protoactor's dead-letter throttle ends on its own timer, after the test.
func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m, goleak.IgnoreTopFunction("github.com/asynkron/protoactor-go/actor.NewDeadLetter.NewThrottle.func4.1"))
}
