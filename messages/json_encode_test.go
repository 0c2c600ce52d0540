package messages_test

import (
	"encoding/json"
	"math"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"google.golang.org/protobuf/types/known/structpb"

	"github.com/troupe-dev/troupe/messages"
)

// TestMarshalJSONKeepsMessagesZeroValues: a job's Version 0, Stop
// false and a group's Count 0 are written (Nomad's client reads them into
// pointers), nested messages and oneofs included; a task's structpb
// Config keeps its own encoding.
func TestMarshalJSONKeepsMessagesZeroValues(t *testing.T) {
	cfg, err := structpb.NewStruct(map[string]any{"command": "/bin/true", "args": []any{"-x"}})
	require.NoError(t, err)
	job := &messages.Job{ID: "web", Priority: 50, TaskGroups: []*messages.TaskGroup{{
		Name: "g", Count: 0, Tasks: []*messages.Task{{Name: "t", Driver: "exec", Config: cfg}},
	}}}
	raw, err := messages.MarshalJSON(job)
	require.NoError(t, err)
	var got map[string]any
	require.NoError(t, json.Unmarshal(raw, &got))
	require.Contains(t, got, "Version")
	require.EqualValues(t, 0, got["Version"])
	require.Equal(t, false, got["Stop"])
	group := got["TaskGroups"].([]any)[0].(map[string]any)
	require.EqualValues(t, 0, group["Count"])
	require.NotContains(t, group, "RestartPolicy", "an absent message stays out")
	require.NotContains(t, got, "Region", "so does an empty string")
	task := group["Tasks"].([]any)[0].(map[string]any)
	require.Equal(t, map[string]any{"command": "/bin/true", "args": []any{"-x"}}, task["Config"])

	require.Contains(t, string(raw), `"Count":0`)

	// Our own shapes holding messages (a map of them, a struct field) get
	// the same rules; the rest of such a shape keeps its tags.
	type wrapper struct {
		Jobs  map[string]*messages.Job `json:"jobs"`
		Note  string                   `json:"note,omitempty"`
		Other *messages.Evaluation     `json:"other,omitempty"`
	}
	raw, err = messages.MarshalJSON(wrapper{Jobs: map[string]*messages.Job{"web": job}})
	require.NoError(t, err)
	require.Contains(t, string(raw), `"Count":0`)
	require.NotContains(t, string(raw), "note")
	require.NotContains(t, string(raw), "other")
}

// TestMarshalJSONRefusesCycles: a cycle is an error, as in
// encoding/json, not a stack overflow.
func TestMarshalJSONRefusesCycles(t *testing.T) {
	type link struct {
		Next *link
		Job  *messages.Job
	}
	l := &link{Job: &messages.Job{ID: "x"}}
	l.Next = l
	_, err := messages.MarshalJSON(l)
	require.ErrorContains(t, err, "a cycle?")
}

// TestMarshalJSONWritesNomadTimes: an evaluation's WaitUntil is an
// RFC 3339 time, left out when 0, and reads back as the same nanoseconds.
func TestMarshalJSONWritesNomadTimes(t *testing.T) {
	at := time.Date(2026, 11, 30, 1, 2, 3, 4000, time.UTC)
	raw, err := messages.MarshalJSON([]*messages.Evaluation{{ID: "a", WaitUntil: at.UnixNano()}, {ID: "b"}})
	require.NoError(t, err)
	var got []map[string]any
	require.NoError(t, json.Unmarshal(raw, &got))
	require.Equal(t, "2026-11-30T01:02:03.000004Z", got[0]["WaitUntil"])
	require.NotContains(t, got[1], "WaitUntil")
	var back []*messages.Evaluation
	require.NoError(t, json.Unmarshal(raw, &back))
	require.Equal(t, at.UnixNano(), back[0].GetWaitUntil())
	require.Zero(t, back[1].GetWaitUntil())
}

// TestMarshalJSONMatchesEncodingJSONOutsideMessages: our own response
// shapes (omitempty, embedded structs, maps, byte slices, times, nil
// values) come out as encoding/json writes them.
func TestMarshalJSONMatchesEncodingJSONOutsideMessages(t *testing.T) {
	type inner struct {
		A int    `json:"a,omitempty"`
		B string `json:"b"`
	}
	type Embedded struct {
		E1 int
		E2 string `json:"e2,omitempty"`
	}
	type outer struct {
		Embedded
		*inner                    // unexported embedded pointer: encoding/json skips it when nil
		Name    string            `json:"name"`
		Skip    string            `json:"-"`
		Opt     *int              `json:"opt,omitempty"`
		Tags    map[string]int    `json:"tags"`
		IntKeys map[int]string    `json:"int_keys"`
		Raw     []byte            `json:"raw"`
		When    time.Time         `json:"when"`
		Took    time.Duration     `json:"took"`
		List    []inner           `json:"list"`
		NilList []string          `json:"nil_list"`
		Any     any               `json:"any"`
		Ratio   float64           `json:"ratio"`
		HTML    string            `json:"html"`
		Nested  map[string]*inner `json:"nested,omitempty"`
		private int
	}
	type Deep struct{ X, Y int }
	type Mid struct {
		Deep
		Y string `json:"Y"`
	}
	type Tie1 struct{ Z int }
	type Tie2 struct{ Z int }
	type conflicts struct { // an interface field sends it through our walk
		Mid
		Tie1
		Tie2
		X   string
		Any any
	}
	type registerResponse struct { // api.JobRegisterResponse, a response shape of the HTTP API
		EvalID          string
		EvalCreateIndex uint64
		JobModifyIndex  uint64
		Warnings        string
		Index           uint64
	}
	seven := 7
	values := []any{
		conflicts{Mid: Mid{Deep: Deep{X: 1, Y: 2}, Y: "mid"}, Tie1: Tie1{Z: 3}, Tie2: Tie2{Z: 4}, X: "top", Any: 5},
		outer{},
		outer{Embedded: Embedded{E1: 1, E2: "x"}, Name: "n", Opt: &seven, Tags: map[string]int{"z": 1, "a": 2},
			IntKeys: map[int]string{10: "x", 2: "y"}, Raw: []byte("hi"), When: time.Unix(1700000000, 5).UTC(),
			Took: time.Second, List: []inner{{A: 1}, {B: "b"}}, Any: map[string]any{"k": []any{1.5, "v"}},
			Ratio: 0.25, HTML: "<a&b>", Nested: map[string]*inner{"n": nil, "m": {A: 3}}, private: 1},
		&outer{Name: "ptr"},
		[]string{"a"},
		map[string]any{},
		nil,
		registerResponse{EvalID: "e", JobModifyIndex: 4},
	}
	for _, v := range values {
		want, err := json.Marshal(v)
		require.NoError(t, err)
		got, err := messages.MarshalJSON(v)
		require.NoError(t, err)
		require.Equal(t, string(want), string(got), "%#v", v)
	}
}

// TestMarshalJSONKeepsLargeIntegersExact: integers above 2^53, which a
// float64 cannot hold (a SubmitTime in unix nanoseconds, a large index),
// are written digit for digit.
func TestMarshalJSONKeepsLargeIntegersExact(t *testing.T) {
	const nanos = 1<<53 + 1
	raw, err := messages.MarshalJSON(&messages.Job{ID: "web", SubmitTime: nanos, ModifyIndex: math.MaxUint64})
	require.NoError(t, err)
	require.Contains(t, string(raw), `"SubmitTime":9007199254740993`)
	require.Contains(t, string(raw), `"ModifyIndex":18446744073709551615`)
	var back messages.Job
	require.NoError(t, json.Unmarshal(raw, &back))
	require.Equal(t, int64(nanos), back.SubmitTime)
	require.Equal(t, uint64(math.MaxUint64), back.ModifyIndex)
}

// TestMarshalJSONLeavesUnsetAffinityWeightOut: an affinity's Weight of 0
// means unset (Nomad refuses an explicit 0), so it stays out; any other
// weight is written.
func TestMarshalJSONLeavesUnsetAffinityWeightOut(t *testing.T) {
	raw, err := messages.MarshalJSON([]*messages.Affinity{{LTarget: "a", RTarget: "b"}, {LTarget: "c", Weight: -20}})
	require.NoError(t, err)
	require.Equal(t, `[{"LTarget":"a","RTarget":"b"},{"LTarget":"c","Weight":-20}]`, string(raw))
}
