package volume

import (
	"time"

	"github.com/cenkalti/backoff/v4"
)

// RetryPolicy is the backoff for node unpublish (and controller
// unpublish) retries: Initial, multiplied by Multiplier after each failed
// attempt up to Max, and no retry that would start after Deadline from the
// first failure. Tests shrink it; there is no jitter, so delays are exact.
type RetryPolicy struct {
	Initial    time.Duration
	Max        time.Duration
	Multiplier float64
	// Deadline bounds the whole retrying; 0 retries forever.
	Deadline time.Duration
}

// DefaultRetryPolicy is 1 s doubling to 1 min, for 24 h.
func DefaultRetryPolicy() RetryPolicy {
	return RetryPolicy{Initial: time.Second, Max: time.Minute, Multiplier: 2, Deadline: 24 * time.Hour}
}

// maxGrowSteps bounds the interval growth loop; any sane policy reaches
// Max long before.
const maxGrowSteps = 4096

// fixedClock is a backoff.Clock that says whatever time it is set to.
type fixedClock struct{ t time.Time }

func (c *fixedClock) Now() time.Time { return c.t }

// NewBackOff returns the policy as a cenkalti/backoff ExponentialBackOff
// on clock (an injected clock in actors and tests).
func (p RetryPolicy) NewBackOff(clock backoff.Clock) *backoff.ExponentialBackOff {
	return backoff.NewExponentialBackOff(
		backoff.WithInitialInterval(p.Initial),
		backoff.WithMaxInterval(p.Max),
		backoff.WithMultiplier(p.Multiplier),
		backoff.WithMaxElapsedTime(p.Deadline),
		backoff.WithRandomizationFactor(0),
		backoff.WithClockProvider(clock),
	)
}

// Delay is how long to wait after failed attempt number attempt (1 for
// the first failure), elapsed after the first failure. ok is false when
// the next try would start past the Deadline: give up.
func (p RetryPolicy) Delay(attempt int, elapsed time.Duration) (delay time.Duration, ok bool) {
	clock := &fixedClock{t: time.Unix(0, 0)}
	b := p.NewBackOff(clock)
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
