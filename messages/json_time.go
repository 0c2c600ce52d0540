package messages

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"time"
)

// A few int64 unix-nanosecond fields are times in Nomad's JSON (RFC 3339
// strings), and Nomad's client cannot read a number there. The HTTP API
// writes them as Nomad does (JSONTimeField says which), and the types
// holding them read either form back.

// jsonTimeFields lists them by message name.
var jsonTimeFields = map[string]map[string]bool{
	"Evaluation":            {"WaitUntil": true},
	"DrainStrategy":         {"ForceDeadline": true, "StartedAt": true},
	"AllocDeploymentStatus": {"Timestamp": true},
	"DeploymentState":       {"RequireProgressBy": true},
}

// JSONTimeField reports whether a field of the named message is written as
// an RFC 3339 time in JSON.
func JSONTimeField(message, field string) bool { return jsonTimeFields[message][field] }

// JSONTime is the RFC 3339 text of unix nanoseconds, in UTC.
func JSONTime(nanos int64) string { return time.Unix(0, nanos).UTC().Format(time.RFC3339Nano) }

// The times unix nanoseconds in an int64 can hold.
var minNanoTime, maxNanoTime = time.Unix(0, math.MinInt64), time.Unix(0, math.MaxInt64)

// nanoTime reads unix nanoseconds written as a number, as an RFC 3339
// time (Nomad's zero time, 0001-01-01, is 0), or as null.
type nanoTime int64

func (n *nanoTime) UnmarshalJSON(b []byte) error {
	b = bytes.TrimSpace(b)
	switch {
	case bytes.Equal(b, []byte("null")):
		return nil
	case len(b) > 0 && b[0] == '"':
		var t time.Time
		if err := t.UnmarshalJSON(b); err != nil {
			return err
		}
		switch {
		case t.IsZero():
			*n = 0
		case t.Before(minNanoTime) || t.After(maxNanoTime):
			return fmt.Errorf("time %s is out of the range of unix nanoseconds (years 1678 to 2262)", t.Format(time.RFC3339))
		default:
			*n = nanoTime(t.UnixNano())
		}
		return nil
	}
	var v int64
	if err := json.Unmarshal(b, &v); err != nil {
		return fmt.Errorf("a time must be an RFC 3339 string or unix nanoseconds: %w", err)
	}
	*n = nanoTime(v)
	return nil
}

// UnmarshalJSON reads WaitUntil as a time or as unix nanoseconds.
func (e *Evaluation) UnmarshalJSON(b []byte) error {
	type plain Evaluation
	aux := struct {
		*plain
		WaitUntil nanoTime
	}{plain: (*plain)(e), WaitUntil: nanoTime(e.WaitUntil)}
	err := json.Unmarshal(b, &aux) // it goes on past a type error, so copy back either way
	e.WaitUntil = int64(aux.WaitUntil)
	return err
}

// UnmarshalJSON reads ForceDeadline and StartedAt as times or as unix
// nanoseconds.
func (d *DrainStrategy) UnmarshalJSON(b []byte) error {
	type plain DrainStrategy
	aux := struct {
		*plain
		ForceDeadline nanoTime
		StartedAt     nanoTime
	}{plain: (*plain)(d), ForceDeadline: nanoTime(d.ForceDeadline), StartedAt: nanoTime(d.StartedAt)}
	err := json.Unmarshal(b, &aux) // it goes on past a type error, so copy back either way
	d.ForceDeadline, d.StartedAt = int64(aux.ForceDeadline), int64(aux.StartedAt)
	return err
}
