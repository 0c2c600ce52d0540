package actors

import (
	"sync/atomic"
	"time"

	"github.com/asynkron/protoactor-go/actor"
)

// Dispatcher runs mailboxes on a pool of goroutines that stay for the next
// mailbox instead of exiting after one run, as protoactor's default
// dispatcher's do.
//
// The default starts a goroutine each time a mailbox goes from idle to
// busy. A leader with ten thousand node actors does that for every plan
// it commits, and each fresh goroutine grows its stack again, copying it
// at each doubling, down the same deep paths (a memdb read, a protobuf
// clone): at a million placements that copying alone took a tenth of the
// CPU. A pooled goroutine keeps the stack it grew.
//
// Scheduling never waits: a run goes to a goroutine already idle in the
// pool, or to a new one when none is. So a mailbox run that blocks holds
// only its own goroutine, exactly as with the default. At most maxIdle
// goroutines wait idle, each for at most idleTimeout; the others exit when
// their run ends. (An idle leader's pool empties itself, so that leak checks
// find no goroutine of it once the actors are gone.)
type Dispatcher struct {
	work       chan func()
	idle       atomic.Int32
	maxIdle    int32
	throughput int
}

var _ actor.Dispatcher = (*Dispatcher)(nil)

// defaultThroughput is protoactor's: messages a mailbox runs before it
// yields its goroutine.
const defaultThroughput = 300

// idleTimeout is how long a pooled goroutine waits for a mailbox to run.
const idleTimeout = 100 * time.Millisecond

// NewDispatcher returns a dispatcher that keeps up to maxIdle goroutines
// waiting for work.
func NewDispatcher(maxIdle int) *Dispatcher {
	return &Dispatcher{work: make(chan func()), maxIdle: int32(maxIdle), throughput: defaultThroughput}
}

// sharedDispatcher serves every actor spawned from a Registry's props.
var sharedDispatcher = NewDispatcher(256)

// Schedule implements actor.Dispatcher.
func (d *Dispatcher) Schedule(fn func()) {
	select {
	case d.work <- fn: // an idle goroutine took it
	default:
		go d.run(fn)
	}
}

// Throughput implements actor.Dispatcher.
func (d *Dispatcher) Throughput() int { return d.throughput }

func (d *Dispatcher) run(fn func()) {
	var t *time.Timer
	for {
		fn()
		if d.idle.Add(1) > d.maxIdle {
			d.idle.Add(-1)
			return
		}
		if t == nil {
			t = time.NewTimer(idleTimeout)
		} else {
			t.Reset(idleTimeout)
		}
		select {
		case fn = <-d.work:
			d.idle.Add(-1)
		case <-t.C:
			d.idle.Add(-1)
			return
		}
	}
}
