package httpapi

import (
	"net/http"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// volumeJob is a job body whose group "g" has one volume "v" (a JSON
// VolumeRequest) mounted by its task.
func volumeJob(id, volume string) map[string]any {
	return map[string]any{"Job": map[string]any{"ID": id, "Type": "service", "Datacenters": []string{"dc1"},
		"TaskGroups": []any{map[string]any{"Name": "g", "Count": 1, "Volumes": map[string]any{"v": rawJSON(volume)},
			"Tasks": []any{map[string]any{"Name": "t", "Driver": "exec", "Config": map[string]any{"command": "/bin/true"},
				"VolumeMounts": []any{map[string]any{"Volume": "v", "Destination": "/data"}}}}}}}}
}

type rawJSON string

func (r rawJSON) MarshalJSON() ([]byte, error) { return []byte(r), nil }

const (
	hostRW = `{"Type":"host","Source":"data"}`
	hostRO = `{"Type":"host","Source":"data","ReadOnly":true}`
	csiRW  = `{"Type":"csi","Source":"db","AccessMode":"single-node-writer","AttachmentMode":"file-system"}`
	csiRO  = `{"Type":"csi","Source":"db","ReadOnly":true,"AccessMode":"single-node-reader-only","AttachmentMode":"file-system"}`
)

// TestACLJobVolumeMounts: registering a job checks, beyond submit-job,
// the mount of each of its volumes as Nomad does: a host volume needs the
// host_volume rule of its source (read for a read-only mount, write for
// any), a CSI volume csi-mount-volume and plugin read. A refusal is a 403
// "Permission denied" that stores nothing.
func TestACLJobVolumeMounts(t *testing.T) {
	s, b, mgmt := aclServer(t, "")
	submit := `namespace "default" { capabilities = ["submit-job"] }`
	tokens := map[string]string{
		"submit only":    clientToken(t, s, mgmt, "submit-only", submit),
		"host write":     clientToken(t, s, mgmt, "host-write", submit+"\n"+`host_volume "data" { policy = "write" }`),
		"host read":      clientToken(t, s, mgmt, "host-read", submit+"\n"+`host_volume "data" { policy = "read" }`),
		"host glob":      clientToken(t, s, mgmt, "host-glob", submit+"\n"+`host_volume "d*" { policy = "write" }`),
		"other host":     clientToken(t, s, mgmt, "other-host", submit+"\n"+`host_volume "logs" { policy = "write" }`),
		"ns write":       clientToken(t, s, mgmt, "ns-write", `namespace "default" { policy = "write" }`),
		"csi mount":      clientToken(t, s, mgmt, "csi-mount", "namespace \"default\" { capabilities = [\"submit-job\", \"csi-mount-volume\"] }\nplugin { policy = \"read\" }"),
		"csi no plugin":  clientToken(t, s, mgmt, "csi-no-plugin", `namespace "default" { capabilities = ["submit-job", "csi-mount-volume"] }`),
		"csi write only": clientToken(t, s, mgmt, "csi-write-only", "namespace \"default\" { capabilities = [\"submit-job\", \"csi-write-volume\"] }\nplugin { policy = \"read\" }"),
		"management":     mgmt,
	}
	for _, tc := range []struct {
		token, volume string
		want          int
	}{
		{"submit only", hostRW, http.StatusForbidden},
		{"submit only", hostRO, http.StatusForbidden},
		{"host write", hostRW, http.StatusOK},
		{"host write", hostRO, http.StatusOK},
		{"host read", hostRO, http.StatusOK},
		{"host read", hostRW, http.StatusForbidden},
		{"host glob", hostRW, http.StatusOK},
		{"other host", hostRO, http.StatusForbidden},
		{"ns write", hostRO, http.StatusForbidden}, // namespace write grants no host volume
		{"host write", csiRO, http.StatusForbidden},
		{"csi mount", csiRO, http.StatusOK},
		{"csi mount", csiRW, http.StatusOK},
		{"csi mount", hostRO, http.StatusForbidden},
		{"csi no plugin", csiRO, http.StatusForbidden},
		{"ns write", csiRO, http.StatusForbidden}, // no plugin read
		{"csi write only", csiRW, http.StatusForbidden},
		{"management", hostRW, http.StatusOK},
		{"management", csiRW, http.StatusOK},
	} {
		id := strings.ReplaceAll(tc.token, " ", "-") + "-" + volumeKind(tc.volume)
		t.Run(id, func(t *testing.T) {
			before := b.Store().Snapshot().Index()
			rec := aclDo(t, s, "PUT", "/v1/jobs", tokens[tc.token], volumeJob(id, tc.volume))
			require.Equal(t, tc.want, rec.Code, rec.Body.String())
			if tc.want == http.StatusForbidden {
				require.Equal(t, "Permission denied", strings.TrimSpace(rec.Body.String()))
				require.Equal(t, before, b.Store().Snapshot().Index(), "a refusal changes nothing")
				require.Nil(t, b.Store().Snapshot().JobByID("default", id))
				return
			}
			require.NotNil(t, b.Store().Snapshot().JobByID("default", id))
		})
	}
}

func volumeKind(v string) string {
	kind := "host"
	if strings.Contains(v, `"csi"`) {
		kind = "csi"
	}
	if strings.Contains(v, `"ReadOnly":true`) {
		return kind + "-ro"
	}
	return kind + "-rw"
}

// TestACLJobVolumeMountsOnPlanAndRevert: a revert registers a stored
// version, so the reverting token needs that version's mounts; a plan,
// which stores nothing, asks submit-job only (as Nomad's Job.Plan).
func TestACLJobVolumeMountsOnPlanAndRevert(t *testing.T) {
	s, b, mgmt := aclServer(t, "")
	submit := clientToken(t, s, mgmt, "submit", `namespace "default" { policy = "write" }`)
	rec := aclDo(t, s, "PUT", "/v1/jobs", mgmt, volumeJob("web", hostRW)) // version 0 mounts "data"
	require.Equal(t, http.StatusOK, rec.Code, rec.Body.String())
	plain := volumeJob("web", hostRW)
	group := plain["Job"].(map[string]any)["TaskGroups"].([]any)[0].(map[string]any)
	delete(group, "Volumes")
	delete(group["Tasks"].([]any)[0].(map[string]any), "VolumeMounts")
	rec = aclDo(t, s, "PUT", "/v1/jobs", submit, plain) // version 1 mounts nothing
	require.Equal(t, http.StatusOK, rec.Code, rec.Body.String())

	before := b.Store().Snapshot().Index()
	rec = aclDo(t, s, "PUT", "/v1/job/web/revert", submit, map[string]any{"JobID": "web", "JobVersion": 0})
	require.Equal(t, http.StatusForbidden, rec.Code, rec.Body.String())
	require.Equal(t, "Permission denied", strings.TrimSpace(rec.Body.String()))
	require.Equal(t, before, b.Store().Snapshot().Index(), "a refused revert changes nothing")
	require.EqualValues(t, 1, b.Store().Snapshot().JobByID("default", "web").GetVersion())

	rec = aclDo(t, s, "PUT", "/v1/job/web/plan", submit, volumeJob("web", hostRW))
	require.Equal(t, http.StatusOK, rec.Code, rec.Body.String())
	require.Equal(t, before, b.Store().Snapshot().Index(), "a plan changes nothing")

	rec = aclDo(t, s, "PUT", "/v1/job/web/revert", mgmt, map[string]any{"JobID": "web", "JobVersion": 0})
	require.Equal(t, http.StatusOK, rec.Code, rec.Body.String())
}

// TestACLJobCSIPluginTask: a task that is a CSI plugin needs
// csi-register-plugin, which namespace write does not grant (Nomad's rule).
func TestACLJobCSIPluginTask(t *testing.T) {
	s, b, mgmt := aclServer(t, "")
	job := func() map[string]any {
		return map[string]any{"Job": map[string]any{"ID": "plugin", "Type": "service", "Datacenters": []string{"dc1"},
			"TaskGroups": []any{map[string]any{"Name": "g", "Count": 1, "Tasks": []any{map[string]any{"Name": "t",
				"Driver": "exec", "Config": map[string]any{"command": "/bin/true"},
				"CSIPluginConfig": map[string]any{"ID": "p", "Type": "node"}}}}}}}
	}
	writer := clientToken(t, s, mgmt, "writer", `namespace "default" { policy = "write" }`)
	before := b.Store().Snapshot().Index()
	rec := aclDo(t, s, "PUT", "/v1/jobs", writer, job())
	require.Equal(t, http.StatusForbidden, rec.Code, rec.Body.String())
	require.Equal(t, before, b.Store().Snapshot().Index())
	plugins := clientToken(t, s, mgmt, "plugins", "namespace \"default\" {\n policy = \"write\"\n capabilities = [\"csi-register-plugin\"]\n}")
	rec = aclDo(t, s, "PUT", "/v1/jobs", plugins, job())
	require.Equal(t, http.StatusOK, rec.Code, rec.Body.String())
}
