package actors

import (
	"math"
	"math/rand/v2"
	"time"

	"github.com/cenkalti/backoff/v4"
)

// Retry is how a failed operation is tried again: the first wait is
// Initial, each later one is multiplied by Multiplier (or, with Step set,
// grows by Step: a linear backoff) up to Max; no try is made once Attempts
// tries failed (0: no bound) or when the wait would end more than Deadline
// after the first failure (0: no deadline). The delays are those of
// cenkalti/backoff/v4 on the injected Clock, without its randomisation:
// Jitter (0 to 1) spreads a Retrier's delays by up to that fraction, with
// a random source tests replace, and the pure Delay and Next have none.
//
// Retry is a comparable value: configs take the zero Retry for "the
// default". It has three uses, from the purest:
//
//	d, ok := p.Delay(attempt, elapsed)      // a persisted count and start
//	d, ok := p.Next(&tries, event.At)       // a state machine's Tries
//	r := p.On(clock); d, ok := r.Next()     // an actor's own bookkeeping
//
// ok false means give up. An actor arms a timer for d that sends it a
// message (timers are messages to self).
type Retry struct {
	Initial time.Duration
	Max     time.Duration // 0: no cap
	// Multiplier grows the interval after each failed try (below 1: 1, a
	// constant interval); Step, when set, is added to it instead.
	Multiplier float64
	Step       time.Duration
	Jitter     float64
	Attempts   int
	Deadline   time.Duration
}

// DefaultRetry is 1 s doubling to 1 min, for 24 h: the retry of CSI
// unpublish, network teardown and controller unpublish (DESIGN.md).
func DefaultRetry() Retry {
	return Retry{Initial: time.Second, Max: time.Minute, Multiplier: 2, Deadline: 24 * time.Hour}
}

// IsZero reports whether p is the zero Retry (configs: use the default).
func (p Retry) IsZero() bool { return p == Retry{} }

// Or returns p, or def when p is the zero Retry.
func (p Retry) Or(def Retry) Retry {
	if p.IsZero() {
		return def
	}
	return p
}

// NewBackOff returns the policy as a cenkalti/backoff BackOff on clock
// (an actors.Clock satisfies backoff.Clock), started now: its elapsed
// time, which Deadline bounds, counts from this call. Jitter is not in it.
func (p Retry) NewBackOff(clock backoff.Clock) backoff.BackOff {
	if p.Attempts == 1 {
		return &backoff.StopBackOff{} // the one try failed
	}
	maxInterval := p.Max
	if maxInterval <= 0 {
		maxInterval = math.MaxInt64 // no cap
	}
	var b backoff.BackOff
	if p.Step > 0 {
		b = &linearBackOff{p: p, clock: clock, start: clock.Now(), next: p.Initial}
	} else {
		b = backoff.NewExponentialBackOff(
			backoff.WithInitialInterval(p.Initial),
			backoff.WithMaxInterval(maxInterval),
			backoff.WithMultiplier(max(p.Multiplier, 1)),
			backoff.WithMaxElapsedTime(p.Deadline),
			backoff.WithRandomizationFactor(0),
			backoff.WithClockProvider(clock),
		)
	}
	if p.Attempts > 0 {
		// Attempts failed tries make Attempts-1 waits.
		b = backoff.WithMaxRetries(b, uint64(p.Attempts-1))
	}
	return b
}

// maxGrowSteps bounds the replay in Delay; any sane policy reaches Max
// long before.
const maxGrowSteps = 4096

// fixedClock is a backoff.Clock that says whatever time it is set to.
type fixedClock struct{ t time.Time }

func (c *fixedClock) Now() time.Time { return c.t }

// Delay is how long to wait after failed try number attempt (1 for the
// first failure), elapsed after the first failure: the policy's backoff
// replayed on a clock that reads the first failure until the last wait.
// ok is false when no try is left (Attempts) or the next one would start
// past the Deadline: give up. It reads no clock.
func (p Retry) Delay(attempt int, elapsed time.Duration) (delay time.Duration, ok bool) {
	attempt = max(attempt, 1)
	if p.Attempts > 0 && attempt >= p.Attempts {
		return 0, false
	}
	clock := &fixedClock{t: time.Unix(0, 0)}
	q := p
	q.Attempts = 0
	b := q.NewBackOff(clock)
	for i := 1; i < min(attempt, maxGrowSteps); i++ {
		b.NextBackOff() // elapsed is 0 here: only grows the interval
	}
	clock.t = clock.t.Add(elapsed)
	d := b.NextBackOff()
	if d == backoff.Stop {
		return 0, false
	}
	return d, true
}

// Tries counts the failed tries of one operation and when the first one
// failed; the zero value is none. A state machine keeps one and feeds
// Next the time its events carry.
type Tries struct {
	N     int
	First time.Time
}

// Next records a try that failed at at and returns the wait before the
// next one (ok false: give up).
func (p Retry) Next(t *Tries, at time.Time) (time.Duration, bool) {
	if t.N == 0 {
		t.First = at
	}
	t.N++
	return p.Delay(t.N, at.Sub(t.First))
}

// Retrier is one operation's retries on an injected clock, for an actor
// that keeps its own count: Next after each failure, Reset after a
// success. It is not safe for concurrent use (an actor owns it).
type Retrier struct {
	policy Retry
	clock  Clock
	tries  Tries
	// Rand returns a number in [0, 1) for Jitter; nil: math/rand/v2.
	Rand func() float64
}

// On returns a Retrier of p on clock.
func (p Retry) On(clock Clock) *Retrier { return &Retrier{policy: p, clock: clock} }

// Next records a failed try now and returns the wait before the next
// one, spread by Jitter (ok false: give up).
func (r *Retrier) Next() (time.Duration, bool) {
	d, ok := r.policy.Next(&r.tries, r.clock.Now())
	if !ok || r.policy.Jitter <= 0 {
		return d, ok
	}
	rnd := rand.Float64
	if r.Rand != nil {
		rnd = r.Rand
	}
	j := min(r.policy.Jitter, 1)
	return time.Duration(float64(d) * (1 - j + 2*j*rnd())), true
}

// Reset forgets the failed tries (the operation worked).
func (r *Retrier) Reset() { r.tries = Tries{} }

// Tries returns how many tries failed since the last Reset.
func (r *Retrier) Tries() int { return r.tries.N }

// linearBackOff is Retry with Step: Initial, Initial+Step, ... up to Max,
// bounded by Deadline as cenkalti's ExponentialBackOff bounds its own.
type linearBackOff struct {
	p     Retry
	clock backoff.Clock
	start time.Time
	next  time.Duration
}

func (b *linearBackOff) NextBackOff() time.Duration {
	d := min(b.next, b.p.Max)
	if b.p.Max <= 0 {
		d = b.next
	}
	b.next = d + b.p.Step
	if b.p.Deadline > 0 && b.clock.Now().Sub(b.start)+d > b.p.Deadline {
		return backoff.Stop
	}
	return d
}

func (b *linearBackOff) Reset() { b.start, b.next = b.clock.Now(), b.p.Initial }
