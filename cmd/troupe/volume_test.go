package main

import (
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"github.com/troupe-dev/troupe/api"
	"github.com/troupe-dev/troupe/messages"
)

// volumeAPI puts a server in front of the fake API that answers the CSI
// volume endpoints itself and passes every other request on to it.
type volumeAPI struct {
	*fakeAPI
	mu      sync.Mutex
	vols    map[string]*messages.CSIVolume
	opCalls []call // volume requests; Query["secrets"] holds X-Nomad-CSI-Secrets
	opErr   int    // when set, volume writes answer this status
}

func newVolumeAPI(t *testing.T) *volumeAPI {
	f := newFakeAPI(t)
	v := &volumeAPI{fakeAPI: f, vols: map[string]*messages.CSIVolume{}}
	inner, err := url.Parse(f.srv.URL)
	require.NoError(t, err)
	mux := http.NewServeMux()
	mux.HandleFunc("PUT /v1/volume/csi/{id}/create", v.record(v.create))
	mux.HandleFunc("DELETE /v1/volume/csi/{id}/detach", v.record(v.write))
	mux.HandleFunc("DELETE /v1/volume/csi/{id}/delete", v.record(v.write))
	mux.HandleFunc("GET /v1/volume/csi/{id}", v.record(func(w http.ResponseWriter, r *http.Request) {
		if vol := v.vols[r.PathValue("id")]; vol != nil {
			v.fakeAPI.reply(w, vol)
			return
		}
		http.Error(w, "volume not found", http.StatusNotFound)
	}))
	mux.Handle("/", httputil.NewSingleHostReverseProxy(inner))
	outer := httptest.NewServer(mux)
	t.Cleanup(outer.Close)
	f.srv = outer // runCLI now points at the front server
	return v
}

func (v *volumeAPI) record(h http.HandlerFunc) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		v.mu.Lock()
		defer v.mu.Unlock()
		q := map[string]string{"secrets": r.Header.Get("X-Nomad-CSI-Secrets")}
		for k := range r.URL.Query() {
			q[k] = r.URL.Query().Get(k)
		}
		v.opCalls = append(v.opCalls, call{Method: r.Method, Path: r.URL.Path, Query: q, Body: string(body)})
		r.Body = io.NopCloser(strings.NewReader(string(body)))
		w.Header().Set("X-Nomad-Index", "21")
		h(w, r)
	}
}

func (v *volumeAPI) create(w http.ResponseWriter, r *http.Request) {
	if v.opErr != 0 {
		http.Error(w, "volume already exists", v.opErr)
		return
	}
	var req struct{ Volumes []*messages.CSIVolume }
	require.NoError(v.t, json.NewDecoder(r.Body).Decode(&req))
	for _, vol := range req.Volumes {
		vol.ExternalID = "vol-0abc"
	}
	v.fakeAPI.reply(w, &api.VolumeCreateResponse{Volumes: req.Volumes, Index: 21})
}

func (v *volumeAPI) write(w http.ResponseWriter, _ *http.Request) {
	if v.opErr != 0 {
		http.Error(w, "volume refused", v.opErr)
		return
	}
	v.fakeAPI.reply(w, map[string]any{"Index": 21})
}

// ops lists the recorded volume requests of method whose path ends in suffix.
func (v *volumeAPI) ops(method, suffix string) []call {
	v.mu.Lock()
	defer v.mu.Unlock()
	var out []call
	for _, c := range v.opCalls {
		if c.Method == method && strings.HasSuffix(c.Path, suffix) {
			out = append(out, c)
		}
	}
	return out
}

const volumeHCL = `
id        = "db1"
name      = "database"
type      = "csi"
plugin_id = "ebs"
capacity_min = "10GiB"
capability {
  access_mode     = "single-node-writer"
  attachment_mode = "file-system"
}
`

func TestVolumeCreate(t *testing.T) {
	tests := []struct {
		name, file, src string
	}{
		{name: "hcl", file: "db1.hcl", src: volumeHCL},
		{name: "json", file: "db1.json", src: `{"ID":"db1","Name":"database","PluginID":"ebs","RequestedCapacityMin":10737418240,
			"RequestedCapabilities":[{"AccessMode":"single-node-writer","AttachmentMode":"file-system"}]}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			v := newVolumeAPI(t)
			code, out, errOut := v.runCLI("volume", "create", writeFile(t, tt.file, tt.src))
			require.Equal(t, 0, code, errOut)
			require.Equal(t, "Created external volume vol-0abc with ID db1\n", out)
			calls := v.ops("PUT", "/v1/volume/csi/db1/create")
			require.Len(t, calls, 1)
			var body struct{ Volumes []*messages.CSIVolume }
			require.NoError(t, json.Unmarshal([]byte(calls[0].Body), &body))
			require.Len(t, body.Volumes, 1)
			require.Equal(t, "default", body.Volumes[0].Namespace)
			require.Equal(t, int64(10<<30), body.Volumes[0].RequestedCapacityMin)
		})
	}
}

func TestVolumeCreateRefused(t *testing.T) {
	v := newVolumeAPI(t)
	bad := strings.Replace(volumeHCL, `plugin_id = "ebs"`, "", 1)
	code, _, errOut := v.runCLI("volume", "create", writeFile(t, "bad.hcl", bad))
	require.Equal(t, 1, code)
	require.Contains(t, errOut, "Error validating the volume:")
	require.Contains(t, errOut, "plugin_id")

	// register's rules want the external_id that create does without
	code, _, errOut = v.runCLI("volume", "register", writeFile(t, "db1.hcl", volumeHCL))
	require.Equal(t, 1, code)
	require.Contains(t, errOut, "external_id")
	require.Empty(t, v.ops("PUT", ""), "invalid files are never sent")

	v.opErr = http.StatusConflict
	code, out, errOut := v.runCLI("volume", "create", writeFile(t, "db1.hcl", volumeHCL))
	require.Equal(t, 1, code)
	require.Empty(t, out)
	require.Contains(t, errOut, "Error creating the volume: Unexpected response code: 409 (volume already exists)")
}

func TestVolumeDetach(t *testing.T) {
	v := newVolumeAPI(t)
	v.nodes[nodeID] = &messages.Node{ID: nodeID, Name: "host-1", Status: "ready"}
	other := "n2n2n2n2-0000-4000-8000-000000000002"
	v.nodes[other] = &messages.Node{ID: other, Name: "host-2", Status: "down"}

	code, out, errOut := v.runCLI("volume", "detach", "db1", "n1n1")
	require.Equal(t, 0, code, errOut)
	require.Equal(t, "Volume \"db1\" detached from node \""+nodeID+"\"\n", out)
	calls := v.ops("DELETE", "/v1/volume/csi/db1/detach")
	require.Len(t, calls, 1)
	require.Equal(t, nodeID, calls[0].Query["node"], "the prefix is resolved to the full ID")

	tests := []struct {
		name string
		args []string
		err  string
	}{
		{name: "ambiguous node", args: []string{"db1", "n"}, err: "matched 2 nodes"},
		{name: "unknown node", args: []string{"db1", "zz"}, err: `no node with prefix or ID "zz"`},
		{name: "one argument", args: []string{"db1"}, err: "this command takes VOLUME NODE"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			code, _, errOut := v.runCLI(append([]string{"volume", "detach"}, tt.args...)...)
			require.Equal(t, 1, code)
			require.Contains(t, errOut, tt.err)
		})
	}
	require.Len(t, v.ops("DELETE", "/detach"), 1, "failed lookups send no detach")

	v.opErr = http.StatusNotFound
	code, _, errOut = v.runCLI("volume", "detach", "nope", nodeID)
	require.Equal(t, 1, code)
	require.Contains(t, errOut, "Error detaching the volume: Unexpected response code: 404")
}

func TestVolumeDelete(t *testing.T) {
	v := newVolumeAPI(t)
	code, out, errOut := v.runCLI("volume", "delete", "-secret", "token=a=b", "-secret", "region=eu", "db1")
	require.Equal(t, 0, code, errOut)
	require.Equal(t, "Successfully deleted volume \"db1\"!\n", out)
	calls := v.ops("DELETE", "/v1/volume/csi/db1/delete")
	require.Len(t, calls, 1)
	require.Equal(t, "region=eu,token=a=b", calls[0].Query["secrets"])

	code, _, errOut = v.runCLI("volume", "delete", "-secret", "token", "db1")
	require.Equal(t, 1, code)
	require.Contains(t, errOut, `"token" is not key=value`)
	require.Len(t, v.ops("DELETE", "/delete"), 1, "a bad flag sends nothing")

	v.opErr = http.StatusConflict
	code, _, errOut = v.runCLI("volume", "delete", "db1")
	require.Equal(t, 1, code)
	require.Contains(t, errOut, "Error deleting the volume: Unexpected response code: 409 (volume refused)")
	require.Equal(t, "", v.ops("DELETE", "/delete")[1].Query["secrets"])
}

func TestVolumeStatusClaims(t *testing.T) {
	v := newVolumeAPI(t)
	v.vols["db1"] = &messages.CSIVolume{ID: "db1", Name: "database", PluginID: "ebs", Namespace: "default",
		Claims: []*messages.CSIVolumeClaim{
			{AllocationID: allocID, NodeID: nodeID, Mode: "write", State: "taken"},
			{AllocationID: "a2a2a2a2-0000-4000-8000-000000000002", NodeID: nodeID, Mode: "read", State: "unpublishing"},
		}}
	code, out, errOut := v.runCLI("volume", "status", "db1")
	require.Equal(t, 0, code, errOut)
	require.Regexp(t, `(?m)^Alloc ID\s+Node ID\s+Mode\s+State$`, out)
	require.Regexp(t, `(?m)^a1a1a1a1\s+n1n1n1n1\s+write\s+taken$`, out)
	require.Regexp(t, `(?m)^a2a2a2a2\s+n1n1n1n1\s+read\s+unpublishing$`, out)
}

func TestAllocStatusVolumes(t *testing.T) {
	f := newFakeAPI(t)
	a := sampleAlloc()
	at := func(s int) int64 { return time.Date(2026, 11, 29, 19, 0, s, 0, time.UTC).UnixNano() }
	a.VolumeStates = map[string]*messages.AllocVolumeState{
		"data": {VolumeID: "db1", PluginID: "ebs", State: "unpublishing", TargetPath: "/var/lib/troupe/csi/data", Attempts: 3,
			Events: []*messages.TaskEvent{
				{Type: "Mounted", Time: at(1), DisplayMessage: "Volume mounted"},
				{Type: "Unpublish Failed", Time: at(9), DisplayMessage: "NodeUnpublishVolume: device busy"},
			}},
		"logs": {VolumeID: "logs1", PluginID: "nfs", State: "mounted"},
	}
	f.allocs[allocID] = a
	code, out, errOut := f.runCLI("alloc", "status", allocID)
	require.Equal(t, 0, code, errOut)
	require.Contains(t, out, "\nCSI Volumes:\n")
	require.Regexp(t, `(?m)^Name\s+Volume ID\s+Plugin ID\s+State\s+Target\s+Failed Attempts$`, out)
	require.Regexp(t, `(?m)^data\s+db1\s+ebs\s+unpublishing\s+/var/lib/troupe/csi/data\s+3$`, out)
	require.Regexp(t, `(?m)^logs\s+logs1\s+nfs\s+mounted\s+<none>\s+0$`, out)
	require.Contains(t, out, "\nVolume \"data\" Recent Events:\n")
	require.NotContains(t, out, `Volume "logs" Recent Events`, "no events, no table")
	failed := strings.Index(out, "2026-11-29T19:00:09Z  Unpublish Failed  NodeUnpublishVolume: device busy")
	mounted := strings.Index(out, "2026-11-29T19:00:01Z  Mounted           Volume mounted")
	require.True(t, failed > 0 && mounted > failed, "newest event first:\n%s", out)
	require.Less(t, mounted, strings.Index(out, `Task "server"`), "volumes come before tasks")

	a.VolumeStates = nil
	code, out, _ = f.runCLI("alloc", "status", allocID)
	require.Equal(t, 0, code)
	require.NotContains(t, out, "CSI Volumes")
}

func TestVolumeHelp(t *testing.T) {
	tests := []struct {
		args []string
		want []string
	}{
		{args: []string{"volume", "-h"}, want: []string{"    create ", "    detach ", "    delete ", "    deregister "}},
		{args: []string{"volume", "create", "-h"}, want: []string{"Usage: troupe volume create [options] FILE", "external_id is not needed", "-address"}},
		{args: []string{"volume", "detach", "-h"}, want: []string{"Usage: troupe volume detach [options] VOLUME NODE", "unique\n  prefix"}},
		{args: []string{"volume", "delete", "-h"}, want: []string{"Usage: troupe volume delete [options] ID", "-secret key=value"}},
	}
	for _, tt := range tests {
		t.Run(strings.Join(tt.args, " "), func(t *testing.T) {
			var stdout, stderr strings.Builder
			code := run(tt.args, &stdout, &stderr)
			require.Equal(t, 0, code)
			for _, w := range tt.want {
				require.Contains(t, stdout.String()+stderr.String(), w)
			}
		})
	}
}
