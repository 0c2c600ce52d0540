package acl

// What mounting a volume into a job asks, checked (as Nomad's
// Job.Register does) for each volume block of a job that is registered.

// AllowHostVolumeMount reports whether a may mount host volume source: a
// read-only mount needs mount-readonly or mount-readwrite on it (host_volume
// policy "read" or "write"), any other mount needs mount-readwrite
// ("write").
func (a *ACL) AllowHostVolumeMount(source string, readOnly bool) bool {
	if readOnly && a.AllowHostVolumeOperation(source, HostVolMountReadOnly) {
		return true
	}
	return a.AllowHostVolumeOperation(source, HostVolMountRW)
}

// AllowCSIMount reports whether a may mount CSI volumes into a job of
// namespace ns. Nomad asks csi-mount-volume in ns and plugin read, for
// read-only and read-write mounts alike.
func (a *ACL) AllowCSIMount(ns string) bool {
	return a.AllowPluginRead() && a.AllowNamespaceOperation(ns, NsCSIMountVolume)
}
