// Package ctrdtest is the test harness for code that runs tasks on
// containerd: a private containerd per test (or per test binary), a
// busybox OCI image built from the host's static busybox, and a local
// plain-HTTP registry. Import it from _test.go files only.
//
//	func TestX(t *testing.T) {
//		dm := ctrdtest.StartDaemon(t) // skips unless root (fails with CI=true)
//		archive, name := ctrdtest.BusyboxArchive(t, t.TempDir())
//		d := containerd.New(containerd.Config{Address: dm.Address(), Namespace: dm.Namespace()})
//		defer d.Shutdown()
//		cfg.Config = map[string]any{"image": containerd.ArchiveScheme + archive, "command": "/bin/sh", ...}
//		...
//		require.Empty(t, dm.Containers(t))
//	}
//
// A Daemon keeps its config, root, state, socket and log in one short dir
// under the temp dir (a socket path must stay under about 100 bytes), with
// CRI disabled; each Daemon has a namespace of its own (Namespace), so
// daemons of parallel test binaries do not share runc's state or cgroups.
// Stop ends containerd gracefully (shims and tasks live on) and Start
// brings it back on the same root. WipeState simulates a host reboot:
// containerd, its shims and their tasks are SIGKILLed, and the state dir,
// runc's state (/run/containerd/runc/<ns>/<id>), the shim sockets
// (/run/containerd/s) and the tasks' cgroups are removed; the root
// (images, snapshots, container records) survives, so after Start the
// containers are there without tasks. StartDaemon's cleanup (Close) kills
// whatever still runs on the daemon and removes all of it from the host.
// StartDaemon needs root, containerd and runc; for one daemon shared by a
// test binary, call RequireHost in each test and NewDaemon once (Close it
// in TestMain).
//
// BuildImage makes the busybox image (with extra files when asked), which
// WriteArchive writes as an "oci-archive://" tar and Registry.Push
// uploads; BusyboxArchive does the former in one call. StartRegistry runs
// Debian's docker-registry on a free loopback port, with or without a
// login (RegistryUser, RegistryPassword). What a tool needs is checked
// first: a missing one skips the test, or fails it with CI=true.
//
// The daemon and registry are Linux-only (test files that use them need a
// linux build constraint); the image builder works everywhere.
package ctrdtest
