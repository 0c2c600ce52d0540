package messages

import (
	"encoding/json"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// TestJSONTimesReadBothForms: WaitUntil, ForceDeadline and StartedAt read
// an RFC 3339 time (Nomad's form), unix nanoseconds (encoding/json's),
// Nomad's zero time as 0 and null or absence as no change; anything else
// is an error naming what a time must be.
func TestJSONTimesReadBothForms(t *testing.T) {
	at := time.Date(2026, 11, 30, 1, 2, 3, 4000, time.UTC)
	for _, tc := range []struct {
		in   string
		want int64
	}{
		{`{"ID":"e","WaitUntil":"` + JSONTime(at.UnixNano()) + `"}`, at.UnixNano()},
		{`{"ID":"e","WaitUntil":"2026-11-30T02:02:03.000004+01:00"}`, at.UnixNano()},
		{`{"ID":"e","WaitUntil":1700000000000000000}`, 1700000000000000000},
		{`{"ID":"e","WaitUntil":"0001-01-01T00:00:00Z"}`, 0},
		{`{"ID":"e","WaitUntil":null}`, 7},
		{`{"ID":"e"}`, 7},
	} {
		e := &Evaluation{WaitUntil: 7}
		require.NoError(t, json.Unmarshal([]byte(tc.in), e), tc.in)
		require.Equal(t, tc.want, e.GetWaitUntil(), tc.in)
		require.Equal(t, "e", e.GetID(), "the other fields are read as before")
	}
	var e Evaluation
	require.ErrorContains(t, json.Unmarshal([]byte(`{"WaitUntil":true}`), &e), "RFC 3339 string or unix nanoseconds")
	require.Error(t, json.Unmarshal([]byte(`{"WaitUntil":"yesterday"}`), &e))
	require.ErrorContains(t, json.Unmarshal([]byte(`{"WaitUntil":"3000-01-01T00:00:00Z"}`), &e), "out of the range")
	e = Evaluation{}
	require.Error(t, json.Unmarshal([]byte(`{"Priority":"high","ID":"a","WaitUntil":5}`), &e))
	require.Equal(t, "a", e.GetID())
	require.Equal(t, int64(5), e.GetWaitUntil(), "read like the other fields despite the type error")

	var d DrainStrategy
	in := `{"Deadline":60000000000,"ForceDeadline":"` + JSONTime(at.UnixNano()) + `","StartedAt":5,"IgnoreSystemJobs":true}`
	require.NoError(t, json.Unmarshal([]byte(in), &d))
	require.Equal(t, int64(60e9), d.GetDeadline())
	require.Equal(t, at.UnixNano(), d.GetForceDeadline())
	require.Equal(t, int64(5), d.GetStartedAt())
	require.True(t, d.GetIgnoreSystemJobs())
	require.True(t, JSONTimeField("DrainStrategy", "StartedAt"))
	require.False(t, JSONTimeField("DrainStrategy", "Deadline"), "a duration stays a number")
}
