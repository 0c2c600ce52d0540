// Package mount holds the Linux bind-mount helpers that the alloc runner's
// HostMounter (volume mounts into task directories) and the hostpath CSI
// plugin (NodePublish) share:
//
//	err := mount.Bind(src, dst, true) // dst must exist; read-only bind
//	if errors.Is(err, mount.ErrBindRefused) {
//		// not root, or no CAP_SYS_ADMIN: fall back (both callers symlink)
//	}
//	ok, err := mount.IsMountPoint(dst) // from /proc/self/mountinfo
//	err = mount.Unmount(dst)           // a path that is no mount point is done
//
// The helpers do no path resolution and make no mount points: each caller
// decides how dst is created and whether symlinks are followed. Off Linux
// the package has nothing but ErrBindRefused.
package mount
