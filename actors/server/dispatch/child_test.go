package dispatch

import (
	"bytes"
	"errors"
	"regexp"
	"testing"
	"time"

	"github.com/golang/snappy"
	"github.com/stretchr/testify/require"

	"github.com/troupe-dev/troupe/messages"
)

func parent(payload string) *messages.Job {
	return &messages.Job{ID: "render", Name: "render", Namespace: "default", Type: "batch", Meta: map[string]string{"team": "a", "scene": "default"},
		ParameterizedJob: &messages.ParameterizedJobConfig{Payload: payload, MetaRequired: []string{"scene"}, MetaOptional: []string{"quality"}},
		TaskGroups:       []*messages.TaskGroup{{Name: "g", Tasks: []*messages.Task{{Name: "t", Driver: "exec"}}}},
		Status:           messages.JobStatusRunning, Version: 3, CreateIndex: 9}
}

func TestCheck(t *testing.T) {
	scene := map[string]string{"scene": "s1"}
	stopped := parent("optional")
	stopped.Stop = true
	child := parent("optional")
	child.Dispatched = true
	bare := parent("optional")
	bare.Meta, bare.ParameterizedJob = nil, &messages.ParameterizedJobConfig{Payload: "optional"}
	for _, tc := range []struct {
		name string
		job  *messages.Job
		req  Request
		want string // "" : accepted
	}{
		{"optional with payload", parent("optional"), Request{Payload: []byte("x"), Meta: scene}, ""},
		{"optional without", parent("optional"), Request{Meta: scene}, ""},
		{"optional meta too", parent("optional"), Request{Meta: map[string]string{"scene": "s", "quality": "hi"}}, ""},
		{"required without", parent("required"), Request{Meta: scene}, "payload is not provided but required"},
		{"required with", parent("required"), Request{Payload: []byte("x"), Meta: scene}, ""},
		{"forbidden with", parent("forbidden"), Request{Payload: []byte("x"), Meta: scene}, "payload provided but forbidden"},
		{"forbidden without", parent("forbidden"), Request{Meta: scene}, ""},
		{"at the limit", parent("optional"), Request{Payload: bytes.Repeat([]byte("x"), PayloadLimit), Meta: scene}, ""},
		{"over the limit", parent("optional"), Request{Payload: bytes.Repeat([]byte("x"), PayloadLimit+1), Meta: scene},
			"payload exceeds maximum size; 16385 > 16384"},
		{"missing required meta", parent("optional"), Request{}, "did not provide required meta keys: [scene]"},
		{"unpermitted meta", parent("optional"), Request{Meta: map[string]string{"scene": "s", "zz": "1", "aa": "2"}},
			"unpermitted metadata keys: [aa zz]"},
		{"not parameterized", &messages.Job{ID: "plain"}, Request{}, `job "plain" is not a parameterized job`},
		{"a dispatched child", child, Request{Meta: scene}, "is not a parameterized job"},
		{"stopped", stopped, Request{Meta: scene}, `job "render" is stopped`},
		{"priority", parent("optional"), Request{Meta: scene, Priority: 80}, ""},
		{"priority out of range", parent("optional"), Request{Meta: scene, Priority: 101}, "priority 101 must be between 1 and 100"},
		{"no meta at all", bare, Request{}, ""},
		{"meta to a parent with none", bare, Request{Meta: map[string]string{"k": "v"}}, "unpermitted metadata keys: [k]"},
		{"template with a space", parent("optional"), Request{Meta: scene, IDPrefixTemplate: "a b"}, "must not contain spaces"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := Check(tc.job, &tc.req)
			if tc.want == "" {
				require.NoError(t, err)
				return
			}
			require.Error(t, err)
			require.True(t, errors.Is(err, ErrInvalid))
			require.Contains(t, err.Error(), tc.want)
		})
	}
}

func TestChild(t *testing.T) {
	now := time.Unix(1_700_000_000, 0)
	require.Equal(t, "render/dispatch-1700000000-0a1b2c3d", ChildID("render", "", now, "0a1b2c3d"))
	require.Equal(t, "render/dispatch-nightly-1700000000-0a1b2c3d", ChildID("render", "nightly", now, "0a1b2c3d"))

	p := parent("optional")
	req := &Request{Payload: []byte("data"), Meta: map[string]string{"scene": "s9"}, IdempotencyToken: "tok"}
	c := Child(p, req, now, "0a1b2c3d")
	require.Equal(t, "render/dispatch-1700000000-0a1b2c3d", c.ID)
	require.Equal(t, c.ID, c.Name)
	require.Equal(t, "render", c.ParentID)
	require.True(t, c.Dispatched)
	require.Nil(t, c.ParameterizedJob)
	require.False(t, c.IsParent())
	plain, err := snappy.Decode(nil, c.Payload)
	require.NoError(t, err)
	require.Equal(t, []byte("data"), plain, "the child carries the payload snappy-compressed, as Nomad's")
	require.Equal(t, snappy.Encode(nil, []byte("data")), c.Payload)
	require.Equal(t, "tok", c.DispatchIdempotencyToken)
	require.Equal(t, map[string]string{"team": "a", "scene": "s9"}, c.Meta, "the request's meta over the parent's")
	require.Zero(t, c.Version)
	require.Zero(t, c.Priority, "the parent's, when the request names none")
	req.Priority = 90
	require.EqualValues(t, 90, Child(p, req, now, "0a1b2c3d").Priority)
	req.Priority = 0
	require.Empty(t, c.Status)
	require.Equal(t, map[string]string{"team": "a", "scene": "default"}, p.Meta, "the parent is not changed")

	cmd := Command(p, req, now)
	dj := cmd.GetDispatchJob()
	require.Regexp(t, regexp.MustCompile(`^render/dispatch-1700000000-[0-9a-f]{8}$`), dj.GetJob().GetID())
	require.Equal(t, dj.GetJob().GetID(), dj.GetEval().GetJobID())
	require.Equal(t, "job-register", dj.GetEval().GetTriggeredBy())
}
