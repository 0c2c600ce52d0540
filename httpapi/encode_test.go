package httpapi

import (
	"bytes"
	"encoding/json"
	"reflect"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"google.golang.org/protobuf/types/known/structpb"

	"github.com/troupe-dev/troupe/api"
	"github.com/troupe-dev/troupe/messages"
)

// marshalResponse is the body writeJSON writes, without its newline:
// json.Marshal with the messages types' zero bools and numbers kept.
func marshalResponse(v any) ([]byte, error) {
	return appendValue(nil, reflect.ValueOf(v), 0)
}

// TestMarshalResponseKeepsMessagesZeroValues: a job's Version 0, Stop
// false and a group's Count 0 are written (Nomad's client reads them into
// pointers), nested messages and oneofs included; a task's structpb
// Config keeps its own encoding.
func TestMarshalResponseKeepsMessagesZeroValues(t *testing.T) {
	cfg, err := structpb.NewStruct(map[string]any{"command": "/bin/true", "args": []any{"-x"}})
	require.NoError(t, err)
	job := &messages.Job{ID: "web", Priority: 50, TaskGroups: []*messages.TaskGroup{{
		Name: "g", Count: 0, Tasks: []*messages.Task{{Name: "t", Driver: "exec", Config: cfg}},
	}}}
	raw, err := marshalResponse(job)
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
	raw, err = marshalResponse(wrapper{Jobs: map[string]*messages.Job{"web": job}})
	require.NoError(t, err)
	require.Contains(t, string(raw), `"Count":0`)
	require.NotContains(t, string(raw), "note")
	require.NotContains(t, string(raw), "other")
}

// TestMarshalResponseRefusesCycles: a cycle is an error, as in
// encoding/json, not a stack overflow.
func TestMarshalResponseRefusesCycles(t *testing.T) {
	type link struct {
		Next *link
		Job  *messages.Job
	}
	l := &link{Job: &messages.Job{ID: "x"}}
	l.Next = l
	_, err := marshalResponse(l)
	require.ErrorContains(t, err, "a cycle?")
}

// TestMarshalResponseWritesNomadTimes: an evaluation's WaitUntil is an
// RFC 3339 time, left out when 0, and reads back as the same nanoseconds.
func TestMarshalResponseWritesNomadTimes(t *testing.T) {
	at := time.Date(2026, 11, 30, 1, 2, 3, 4000, time.UTC)
	raw, err := marshalResponse([]*messages.Evaluation{{ID: "a", WaitUntil: at.UnixNano()}, {ID: "b"}})
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

// TestMarshalResponseMatchesEncodingJSONOutsideMessages: our own response
// shapes (omitempty, embedded structs, maps, byte slices, times, nil
// values) come out as encoding/json writes them.
func TestMarshalResponseMatchesEncodingJSONOutsideMessages(t *testing.T) {
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
		api.JobRegisterResponse{EvalID: "e", JobModifyIndex: 4},
	}
	for _, v := range values {
		want, err := json.Marshal(v)
		require.NoError(t, err)
		got, err := marshalResponse(v)
		require.NoError(t, err)
		require.Equal(t, string(want), string(got), "%#v", v)
	}
}

// TestWriteJSONPretty: ?pretty indents, and the body ends with a newline
// either way, as json.Encoder's did.
func TestWriteJSONPretty(t *testing.T) {
	var flat, pretty bytes.Buffer
	require.NoError(t, writeJSON(&flat, map[string]int{"a": 1}, false))
	require.NoError(t, writeJSON(&pretty, map[string]int{"a": 1}, true))
	require.Equal(t, "{\"a\":1}\n", flat.String())
	require.Equal(t, "{\n    \"a\": 1\n}\n", pretty.String())
}
