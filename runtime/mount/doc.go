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
// Tmpfs and UnmountAll make and remove the alloc runner's per-task
// secrets tmpfs (a task's secrets dir never reaches the disk):
//
//	made, err := mount.Tmpfs(dir, "size=1m,mode=0700") // none twice on one dir
//	err = mount.UnmountAll(dir)                        // every mount on dir
//
// Bind, Unmount and IsMountPoint do no path resolution (Tmpfs and
// UnmountAll resolve dir's symlinks, as mount(2) does), and none makes a
// mount point: each caller decides how dst is created and whether
// symlinks are followed. Off Linux
// the package has nothing but ErrBindRefused.
package mount
