package actors

import (
	"fmt"
	"testing"
	"time"

	"github.com/cenkalti/backoff/v4"
	"github.com/stretchr/testify/require"
)

func TestRetryDelayDefault(t *testing.T) {
	p := DefaultRetry()
	cases := []struct {
		attempt int
		elapsed time.Duration
		want    time.Duration
		ok      bool
	}{
		{0, 0, time.Second, true}, // taken as the first failure
		{1, 0, time.Second, true},
		{2, time.Second, 2 * time.Second, true},
		{3, 3 * time.Second, 4 * time.Second, true},
		{4, 7 * time.Second, 8 * time.Second, true},
		{5, 15 * time.Second, 16 * time.Second, true},
		{6, 31 * time.Second, 32 * time.Second, true},
		{7, 63 * time.Second, time.Minute, true}, // 64 s capped at 1 min
		{8, 2 * time.Minute, time.Minute, true},
		{1000, 23 * time.Hour, time.Minute, true},
		{1000, 24*time.Hour - time.Minute, time.Minute, true}, // ends exactly at the deadline
		{1000, 24*time.Hour - 59*time.Second, 0, false},       // would end past it
		{3, 25 * time.Hour, 0, false},
	}
	for _, tc := range cases {
		t.Run(fmt.Sprintf("attempt%d@%s", tc.attempt, tc.elapsed), func(t *testing.T) {
			got, ok := p.Delay(tc.attempt, tc.elapsed)
			require.Equal(t, tc.ok, ok)
			require.Equal(t, tc.want, got)
		})
	}
}

// delays runs p until it gives up, each wait taken in full, and returns
// the waits in ms.
func delays(p Retry, limit int) []time.Duration {
	var out []time.Duration
	var tries Tries
	at := time.Unix(0, 0)
	for range limit {
		d, ok := p.Next(&tries, at)
		if !ok {
			break
		}
		out = append(out, d/time.Millisecond)
		at = at.Add(d)
	}
	return out
}

func TestRetryPolicies(t *testing.T) {
	ms := time.Millisecond
	cases := []struct {
		name string
		p    Retry
		want []time.Duration
	}{
		{"exponential to a deadline", Retry{Initial: ms, Max: 4 * ms, Multiplier: 2, Deadline: 20 * ms}, []time.Duration{1, 2, 4, 4, 4, 4}},
		{"attempts bound the tries", Retry{Initial: ms, Max: 4 * ms, Multiplier: 2, Attempts: 4}, []time.Duration{1, 2, 4}},
		{"one attempt: no retry", Retry{Initial: ms, Multiplier: 2, Attempts: 1}, nil},
		{"the first of deadline and attempts", Retry{Initial: ms, Max: 4 * ms, Multiplier: 2, Attempts: 10, Deadline: 7 * ms}, []time.Duration{1, 2, 4}},
		{"multiplier below 1 is constant", Retry{Initial: 3 * ms, Attempts: 4}, []time.Duration{3, 3, 3}},
		{"linear step", Retry{Initial: ms, Step: ms, Max: 3 * ms, Attempts: 6}, []time.Duration{1, 2, 3, 3, 3}},
		{"linear to a deadline", Retry{Initial: ms, Step: ms, Max: 30 * ms, Deadline: 6 * ms}, []time.Duration{1, 2, 3}},
		{"no cap", Retry{Initial: ms, Multiplier: 10, Attempts: 4}, []time.Duration{1, 10, 100}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			require.Equal(t, tc.want, delays(tc.p, 50))
		})
	}
}

func TestRetryNoDeadlineNeverGivesUp(t *testing.T) {
	p := Retry{Initial: time.Millisecond, Max: 4 * time.Millisecond, Multiplier: 2}
	d, ok := p.Delay(50, 1000*time.Hour)
	require.True(t, ok)
	require.Equal(t, 4*time.Millisecond, d)
}

func TestRetryDefaults(t *testing.T) {
	require.True(t, Retry{}.IsZero())
	require.Equal(t, DefaultRetry(), Retry{}.Or(DefaultRetry()))
	own := Retry{Initial: time.Millisecond}
	require.Equal(t, own, own.Or(DefaultRetry()))
}

func TestRetryBackOffOnInjectedClock(t *testing.T) {
	clock := NewFakeClock(time.Unix(100, 0))
	b := DefaultRetry().NewBackOff(clock)
	require.Equal(t, time.Second, b.NextBackOff())
	require.Equal(t, 2*time.Second, b.NextBackOff())
	clock.Advance(25 * time.Hour)
	require.Equal(t, backoff.Stop, b.NextBackOff())
}

func TestRetrierCountsOnTheClock(t *testing.T) {
	clock := NewFakeClock(time.Unix(100, 0))
	r := Retry{Initial: time.Second, Max: 4 * time.Second, Multiplier: 2, Deadline: 10 * time.Second}.On(clock)
	var got []time.Duration
	for {
		d, ok := r.Next()
		if !ok {
			break
		}
		got = append(got, d)
		clock.Advance(d)
	}
	require.Equal(t, []time.Duration{time.Second, 2 * time.Second, 4 * time.Second}, got, "7 s waited; 4 more would pass 10 s")
	require.Equal(t, 4, r.Tries())
	r.Reset()
	require.Zero(t, r.Tries())
	d, ok := r.Next()
	require.True(t, ok)
	require.Equal(t, time.Second, d, "after a reset the deadline counts from the new first failure")
}

func TestRetrierJitterIsInjectable(t *testing.T) {
	clock := NewFakeClock(time.Unix(0, 0))
	p := Retry{Initial: time.Second, Max: time.Minute, Multiplier: 2, Jitter: 0.5}
	for _, tc := range []struct {
		rnd  float64
		want time.Duration
	}{{0, 500 * time.Millisecond}, {0.5, time.Second}, {0.75, 1250 * time.Millisecond}} {
		r := p.On(clock)
		r.Rand = func() float64 { return tc.rnd }
		d, ok := r.Next()
		require.True(t, ok)
		require.Equal(t, tc.want, d, "rand %v", tc.rnd)
	}
	d, ok := p.Delay(1, 0)
	require.True(t, ok)
	require.Equal(t, time.Second, d, "Delay has no jitter")
}
