package acl

// Policy levels.
const (
	PolicyDeny  = "deny"
	PolicyRead  = "read"
	PolicyWrite = "write"
	PolicyScale = "scale"
	PolicyList  = "list"
)

// Namespace capabilities (Nomad's).
const (
	NsDeny                = "deny"
	NsListJobs            = "list-jobs"
	NsParseJob            = "parse-job"
	NsReadJob             = "read-job"
	NsSubmitJob           = "submit-job"
	NsDispatchJob         = "dispatch-job"
	NsReadLogs            = "read-logs"
	NsReadFS              = "read-fs"
	NsAllocExec           = "alloc-exec"
	NsAllocNodeExec       = "alloc-node-exec"
	NsAllocLifecycle      = "alloc-lifecycle"
	NsCSIRegisterPlugin   = "csi-register-plugin"
	NsCSIWriteVolume      = "csi-write-volume"
	NsCSIReadVolume       = "csi-read-volume"
	NsCSIListVolume       = "csi-list-volume"
	NsCSIMountVolume      = "csi-mount-volume"
	NsListScalingPolicies = "list-scaling-policies"
	NsReadScalingPolicy   = "read-scaling-policy"
	NsReadJobScaling      = "read-job-scaling"
	NsScaleJob            = "scale-job"
	NsSubmitRecommend     = "submit-recommendation"
	NsSentinelOverride    = "sentinel-override"
	NsHostVolumeCreate    = "host-volume-create"
	NsHostVolumeRegister  = "host-volume-register"
	NsHostVolumeRead      = "host-volume-read"
	NsHostVolumeWrite     = "host-volume-write"
	NsHostVolumeDelete    = "host-volume-delete"
)

// Variable capabilities.
const (
	VarDeny    = "deny"
	VarRead    = "read"
	VarList    = "list"
	VarWrite   = "write"
	VarDestroy = "destroy"
)

// Host volume capabilities.
const (
	HostVolDeny          = "deny"
	HostVolMountReadOnly = "mount-readonly"
	HostVolMountRW       = "mount-readwrite"
)

var nsCaps = set(NsDeny, NsListJobs, NsParseJob, NsReadJob, NsSubmitJob, NsDispatchJob, NsReadLogs, NsReadFS,
	NsAllocExec, NsAllocNodeExec, NsAllocLifecycle, NsCSIRegisterPlugin, NsCSIWriteVolume, NsCSIReadVolume,
	NsCSIListVolume, NsCSIMountVolume, NsListScalingPolicies, NsReadScalingPolicy, NsReadJobScaling, NsScaleJob,
	NsSubmitRecommend, NsSentinelOverride, NsHostVolumeCreate, NsHostVolumeRegister, NsHostVolumeRead,
	NsHostVolumeWrite, NsHostVolumeDelete)

var varCaps = set(VarDeny, VarRead, VarList, VarWrite, VarDestroy)

var hostVolCaps = set(HostVolDeny, HostVolMountReadOnly, HostVolMountRW)

var readNsCaps = []string{NsListJobs, NsParseJob, NsReadJob, NsCSIListVolume, NsCSIReadVolume,
	NsReadJobScaling, NsListScalingPolicies, NsReadScalingPolicy, NsHostVolumeRead}

var scaleNsCaps = []string{NsListScalingPolicies, NsReadScalingPolicy, NsReadJobScaling, NsScaleJob}

var writeNsCaps = append([]string{NsScaleJob, NsSubmitJob, NsDispatchJob, NsReadLogs, NsReadFS,
	NsAllocExec, NsAllocLifecycle, NsCSIMountVolume, NsCSIWriteVolume, NsSubmitRecommend,
	NsHostVolumeCreate, NsHostVolumeRegister, NsHostVolumeWrite, NsHostVolumeDelete}, readNsCaps...)

// expandNamespacePolicy is the capability list a namespace's policy
// level stands for.
func expandNamespacePolicy(level string) []string {
	switch level {
	case PolicyDeny:
		return []string{NsDeny}
	case PolicyRead:
		return readNsCaps
	case PolicyWrite:
		return writeNsCaps
	case PolicyScale:
		return scaleNsCaps
	}
	return nil
}

// expandHostVolumePolicy is the capability list a host volume's policy
// level stands for.
func expandHostVolumePolicy(level string) []string {
	switch level {
	case PolicyDeny:
		return []string{HostVolDeny}
	case PolicyRead:
		return []string{HostVolMountReadOnly}
	case PolicyWrite:
		return []string{HostVolMountReadOnly, HostVolMountRW}
	}
	return nil
}

func set(xs ...string) map[string]bool {
	m := make(map[string]bool, len(xs))
	for _, x := range xs {
		m[x] = true
	}
	return m
}
