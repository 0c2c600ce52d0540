package httpapi

import (
	"net/http"

	"github.com/troupe-dev/troupe/acl"
	"github.com/troupe-dev/troupe/cluster/state"
	"github.com/troupe-dev/troupe/jobspec"
	"github.com/troupe-dev/troupe/messages"
)

// aclCheckJobMounts checks what registering job asks beyond submit-job,
// as Nomad's Job.Register does: each group volume its mount (a host
// volume: the host_volume rule of its source, read-only or read-write;
// a CSI volume: csi-mount-volume in the job's namespace and plugin read;
// any other type is refused), and a CSI plugin task csi-register-plugin.
// Register and revert (a registration of a stored version) check it;
// plan, dispatch and scale do not, as Nomad's do not. A refusal is a 403
// "Permission denied" before anything is written.
func aclCheckJobMounts(r *http.Request, job *messages.Job) error {
	q := aclOf(r)
	if q == nil || q.res.acl.IsManagement() || jobMountsAllowed(q.res.acl, job) {
		return nil
	}
	return errPermissionDenied
}

func jobMountsAllowed(a *acl.ACL, job *messages.Job) bool {
	ns := state.NamespaceOrDefault(job.GetNamespace())
	for _, g := range job.GetTaskGroups() {
		for _, v := range g.GetVolumes() {
			if !volumeMountAllowed(a, ns, v) {
				return false
			}
		}
		for _, t := range g.GetTasks() {
			if t.GetCSIPluginConfig() != nil && !a.AllowNamespaceOperation(ns, acl.NsCSIRegisterPlugin) {
				return false
			}
		}
	}
	return true
}

func volumeMountAllowed(a *acl.ACL, ns string, v *messages.VolumeRequest) bool {
	switch v.GetType() {
	case jobspec.VolumeTypeHost:
		return a.AllowHostVolumeMount(v.GetSource(), v.GetReadOnly())
	case jobspec.VolumeTypeCSI:
		return a.AllowCSIMount(ns)
	}
	return false
}
