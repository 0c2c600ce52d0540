package volume

import (
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

func TestRetryPolicyNumbers(t *testing.T) {
	p := DefaultRetryPolicy()
	cases := []struct {
		attempt int
		elapsed time.Duration
		want    time.Duration
		ok      bool
	}{
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

func TestRetryPolicyShrunkForTests(t *testing.T) {
	p := RetryPolicy{Initial: time.Millisecond, Max: 4 * time.Millisecond, Multiplier: 2, Deadline: 20 * time.Millisecond}
	var delays []time.Duration
	elapsed := time.Duration(0)
	for attempt := 1; ; attempt++ {
		d, ok := p.Delay(attempt, elapsed)
		if !ok {
			break
		}
		delays = append(delays, d)
		elapsed += d
	}
	require.Equal(t, []time.Duration{1, 2, 4, 4, 4, 4}, scaleMS(delays))
	require.LessOrEqual(t, elapsed, p.Deadline)

	forever := p
	forever.Deadline = 0
	d, ok := forever.Delay(50, 1000*time.Hour)
	require.True(t, ok, "no deadline: never give up")
	require.Equal(t, 4*time.Millisecond, d)
}

func scaleMS(ds []time.Duration) []time.Duration {
	out := make([]time.Duration, len(ds))
	for i, d := range ds {
		out[i] = d / time.Millisecond
	}
	return out
}

func TestRetryPolicyBackOffOnInjectedClock(t *testing.T) {
	clock := &fixedClock{t: time.Unix(100, 0)}
	b := DefaultRetryPolicy().NewBackOff(clock)
	require.Equal(t, time.Second, b.NextBackOff())
	require.Equal(t, 2*time.Second, b.NextBackOff())
	clock.t = clock.t.Add(25 * time.Hour)
	require.Equal(t, b.Stop, b.NextBackOff())
}
