package httpapi

import (
	"context"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/hashicorp/raft"
	"github.com/stretchr/testify/require"
	"google.golang.org/protobuf/proto"

	"github.com/troupe-dev/troupe/cluster/state"
	"github.com/troupe-dev/troupe/messages"
)

// fakeBackend answers VolumeOp with answer and records every request. The
// embedded Backend is nil: a handler that reaches for anything else
// panics, which fails the test.
type fakeBackend struct {
	Backend
	mu     sync.Mutex
	reqs   []*messages.VolumeOpRequest
	answer func(*messages.VolumeOpRequest) (*messages.VolumeOpResponse, error)
	once   sync.Once
	store  *state.Store
}

// Store holds volume vol1 in "default": the operator requests on a
// registered volume look it up in the request's namespace before they
// reach VolumeOp.
func (f *fakeBackend) Store() *state.Store {
	f.once.Do(func() {
		fsm := state.NewFSM(state.NewStore(), nil)
		data, err := proto.Marshal(&messages.Command{Cmd: &messages.Command_RegisterVolume{RegisterVolume: &messages.RegisterVolume{
			Volume: &messages.CSIVolume{ID: "vol1", Namespace: "default", PluginID: "ebs"}}}})
		if err != nil {
			panic(err)
		}
		if res := fsm.Apply(&raft.Log{Index: 1, Type: raft.LogCommand, Data: data}); res != nil {
			panic(res)
		}
		f.store = fsm.Store()
	})
	return f.store
}

func (f *fakeBackend) Leader() string     { return "10.0.0.1:4647" }
func (f *fakeBackend) LeaderHTTP() string { return "" }
func (f *fakeBackend) Now() time.Time     { return time.Unix(1700000000, 0) }

func (f *fakeBackend) VolumeOp(_ context.Context, req *messages.VolumeOpRequest) (*messages.VolumeOpResponse, error) {
	f.mu.Lock()
	f.reqs = append(f.reqs, req)
	f.mu.Unlock()
	if f.answer == nil {
		return &messages.VolumeOpResponse{Index: 7}, nil
	}
	return f.answer(req)
}

func (f *fakeBackend) sent() []*messages.VolumeOpRequest {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]*messages.VolumeOpRequest(nil), f.reqs...)
}

// answerErr answers every VolumeOp with a messages.Error of code.
func answerErr(code, msg string) func(*messages.VolumeOpRequest) (*messages.VolumeOpResponse, error) {
	return func(*messages.VolumeOpRequest) (*messages.VolumeOpResponse, error) {
		return &messages.VolumeOpResponse{Error: &messages.Error{Code: code, Message: msg}}, nil
	}
}

// errNoLeader is what a Backend returns when no leader answers.
var errNoLeader = errors.New("no cluster leader")

// do runs one request through the API and returns its status, body and
// X-Nomad-Index.
func do(t *testing.T, b Backend, method, target, body string, header http.Header) (int, string, string) {
	t.Helper()
	req := httptest.NewRequest(method, target, strings.NewReader(body))
	for k, v := range header {
		req.Header[k] = v
	}
	rec := httptest.NewRecorder()
	New(b, nil, Options{}).ServeHTTP(rec, req)
	out, err := io.ReadAll(rec.Body)
	require.NoError(t, err)
	return rec.Code, string(out), rec.Header().Get("X-Nomad-Index")
}

const (
	createVol = `{"ID":"vol1","Name":"data","PluginID":"ebs",
	"RequestedCapabilities":[{"AccessMode":"single-node-writer","AttachmentMode":"file-system"}],
	"RequestedCapacityMin":1073741824,"Claims":[{"AllocationID":"a1"}],"Schedulable":true}`
	createBody = `{"Volumes":[` + createVol + `]}`
)

func TestVolumeCreate(t *testing.T) {
	f := &fakeBackend{answer: func(req *messages.VolumeOpRequest) (*messages.VolumeOpResponse, error) {
		v := proto.Clone(req.Volume).(*messages.CSIVolume)
		v.ExternalID, v.Capacity = "vol-0abc", 2<<30
		return &messages.VolumeOpResponse{Index: 17, Volume: v}, nil
	}}
	code, body, index := do(t, f, "PUT", "/v1/volume/csi/vol1/create", createBody, nil)
	require.Equal(t, http.StatusOK, code, body)
	require.Equal(t, "17", index)
	require.Contains(t, body, `"ExternalID":"vol-0abc"`)
	require.Contains(t, body, `"Warnings":""`)

	reqs := f.sent()
	require.Len(t, reqs, 1)
	req := reqs[0]
	require.Equal(t, "create", req.Op)
	require.Equal(t, "vol1", req.VolumeID)
	require.Equal(t, "default", req.Volume.Namespace, "canonicalized")
	require.Equal(t, int64(1<<30), req.Volume.RequestedCapacityMin)
	require.Empty(t, req.Volume.Claims, "claims are the servers' to keep")
	require.False(t, req.Volume.Schedulable)

	code, body, _ = do(t, f, "POST", "/v1/volume/csi/vol1/create", createBody, nil)
	require.Equal(t, http.StatusOK, code, body)
	require.Len(t, f.sent(), 2, "POST works like PUT")
}

func TestVolumeCreateBadBody(t *testing.T) {
	tests := []struct {
		name, target, body string
		says               []string
	}{
		{name: "malformed JSON", target: "vol1", body: `{"Volumes":[{"ID":"vol1",}]}`, says: []string{"line 1"}},
		{name: "every problem named", target: "vol1",
			body: `{"Volumes":[{"ID":"vol1","Name":"data","RequestedCapabilities":[{"AccessMode":"everyone","AttachmentMode":"file-system"}]}]}`,
			says: []string{"plugin_id", `"everyone"`}},
		{name: "ID does not match URL", target: "other", body: createBody, says: []string{`volume ID "vol1" does not match the URL's "other"`}},
		{name: "no volume", target: "vol1", body: `{"Volumes":[]}`, says: []string{"non-empty"}},
		{name: "duplicate volume", target: "vol1", body: `{"Volumes":[` + createVol + `,` + createVol + `]}`,
			says: []string{"holds 2 volumes"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := &fakeBackend{}
			code, body, _ := do(t, f, "PUT", "/v1/volume/csi/"+tt.target+"/create", tt.body, nil)
			require.Equal(t, http.StatusBadRequest, code, body)
			for _, s := range tt.says {
				require.Contains(t, body, s)
			}
			require.Empty(t, f.sent(), "a bad request reaches no leader")
		})
	}
}

func TestVolumeDetach(t *testing.T) {
	f := &fakeBackend{}
	code, body, index := do(t, f, "DELETE", "/v1/volume/csi/vol1/detach?node=n1n1n1n1-0000-4000-8000-000000000001", "", nil)
	require.Equal(t, http.StatusOK, code, body)
	require.Equal(t, "7", index)
	require.Equal(t, []*messages.VolumeOpRequest{{Op: "detach", VolumeID: "vol1",
		NodeID: "n1n1n1n1-0000-4000-8000-000000000001"}}, f.sent())

	f = &fakeBackend{}
	code, body, _ = do(t, f, "DELETE", "/v1/volume/csi/vol1/detach", "", nil)
	require.Equal(t, http.StatusBadRequest, code)
	require.Contains(t, body, "?node=")
	require.Empty(t, f.sent())
}

func TestVolumeDelete(t *testing.T) {
	f := &fakeBackend{}
	code, body, index := do(t, f, "DELETE", "/v1/volume/csi/vol1/delete", "",
		http.Header{"X-Nomad-Csi-Secrets": {"token=abc=,region=eu"}})
	require.Equal(t, http.StatusOK, code, body)
	require.Equal(t, "7", index)
	require.Equal(t, []*messages.VolumeOpRequest{{Op: "delete", VolumeID: "vol1",
		Secrets: map[string]string{"token": "abc=", "region": "eu"}}}, f.sent())

	f = &fakeBackend{}
	code, _, _ = do(t, f, "DELETE", "/v1/volume/csi/vol1/delete", "", nil)
	require.Equal(t, http.StatusOK, code)
	require.Nil(t, f.sent()[0].Secrets, "no header, no secrets")

	for _, bad := range []string{"token", "=v", "a=1,,b=2"} {
		f = &fakeBackend{}
		code, body, _ = do(t, f, "DELETE", "/v1/volume/csi/vol1/delete", "", http.Header{"X-Nomad-Csi-Secrets": {bad}})
		require.Equal(t, http.StatusBadRequest, code, bad)
		require.Contains(t, body, "X-Nomad-CSI-Secrets")
		require.Empty(t, f.sent(), bad)
	}
}

func TestVolumeDeregister(t *testing.T) {
	f := &fakeBackend{}
	code, body, _ := do(t, f, "DELETE", "/v1/volume/csi/vol1?force=true", "", nil)
	require.Equal(t, http.StatusOK, code, body)
	code, _, _ = do(t, f, "DELETE", "/v1/volume/csi/vol1?force=false", "", nil)
	require.Equal(t, http.StatusOK, code)
	require.Equal(t, []*messages.VolumeOpRequest{
		{Op: "deregister", VolumeID: "vol1", Force: true},
		{Op: "deregister", VolumeID: "vol1"},
	}, f.sent())
}

// TestVolumeOpErrors maps each answer of the leader to a status, on every
// endpoint.
func TestVolumeOpErrors(t *testing.T) {
	endpoints := []struct{ name, method, target, body string }{
		{"create", "PUT", "/v1/volume/csi/vol1/create", createBody},
		{"detach", "DELETE", "/v1/volume/csi/vol1/detach?node=n1", ""},
		{"delete", "DELETE", "/v1/volume/csi/vol1/delete", ""},
		{"deregister", "DELETE", "/v1/volume/csi/vol1", ""},
	}
	answers := []struct {
		name   string
		answer func(*messages.VolumeOpRequest) (*messages.VolumeOpResponse, error)
		status int
		says   string
	}{
		{"unknown volume", answerErr("not_found", `volume "vol1" not found`), http.StatusNotFound, `volume "vol1" not found`},
		{"invalid", answerErr("invalid", "plugin ebs has no controller"), http.StatusBadRequest, "no controller"},
		{"conflict", answerErr("conflict", "volume vol1 has 1 claim in use"), http.StatusConflict, "claim in use"},
		{"internal", answerErr("internal", "CreateVolume: rpc error"), http.StatusInternalServerError, "rpc error"},
		{"code only", answerErr("internal", ""), http.StatusInternalServerError, `"vol1": internal`},
		{"not leader", answerErr("not_leader", "lost leadership"), http.StatusServiceUnavailable, "lost leadership"},
		{"no leader", func(*messages.VolumeOpRequest) (*messages.VolumeOpResponse, error) { return nil, errNoLeader },
			http.StatusServiceUnavailable, "no answer from the leader: no cluster leader"},
	}
	for _, ep := range endpoints {
		for _, a := range answers {
			t.Run(ep.name+"/"+a.name, func(t *testing.T) {
				f := &fakeBackend{answer: a.answer}
				code, body, _ := do(t, f, ep.method, ep.target, ep.body, nil)
				require.Equal(t, a.status, code, body)
				require.Contains(t, body, a.says)
				reqs := f.sent()
				require.Len(t, reqs, 1)
				require.Equal(t, ep.name, reqs[0].Op)
			})
		}
	}
}
