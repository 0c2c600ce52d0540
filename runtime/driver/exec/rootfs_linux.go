package exec

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"syscall"

	"golang.org/x/sys/unix"

	"github.com/troupe-dev/troupe/runtime/driver"
	"github.com/troupe-dev/troupe/runtime/safepath"
)

// buildRoot makes an isolated task's root at root, in the executor's
// init process, which runs in a new mount namespace: every mount is made
// private first, so nothing made here reaches the host and all of it goes
// when the namespace does. The root is a small tmpfs holding the
// chroot_env read-only bind mounts (symlinks copied as symlinks), /alloc,
// /local and /tmp (bind mounts of the allocation's and the task's dirs),
// /secrets (a tmpfs only the task's user reads, seeded with what the
// client wrote in the task's secrets dir), a minimal /dev, a
// fresh /proc and the task's volumes; it is made read-only at the end.
func buildRoot(spec *executorSpec, root string, cred *syscall.Credential) error {
	iso := spec.Isolation
	if err := unix.Mount("", "/", "", unix.MS_REC|unix.MS_PRIVATE, ""); err != nil {
		return fmt.Errorf("making mounts private: %w", err)
	}
	dirs, err := taskDirs(spec)
	if err != nil {
		return err
	}
	if err := os.MkdirAll(root, 0o700); err != nil {
		return err
	}
	if err := mountFS("tmpfs", root, "tmpfs", unix.MS_NOSUID|unix.MS_NODEV, "mode=0755,size=1m"); err != nil {
		return err
	}
	if err := chrootEnv(root, iso.ChrootEnv); err != nil {
		return err
	}
	binds := []driver.Mount{{Source: iso.AllocDir, Destination: driver.TaskAllocDir},
		{Source: dirs[localDirName], Destination: driver.TaskLocalDir},
		{Source: dirs[tmpDirName], Destination: driver.TaskTmpDir}}
	for _, m := range binds {
		if err := bindInto(root, m); err != nil {
			return err
		}
	}
	uid, gid := credIDs(cred)
	secrets := fmt.Sprintf("mode=0700,uid=%d,gid=%d,size=1m", uid, gid)
	if err := mountIn(root, driver.TaskSecretsDir, "tmpfs", "tmpfs", unix.MS_NOSUID|unix.MS_NODEV, secrets); err != nil {
		return err
	}
	if err := seedSecrets(dirs[secretsDirName], filepath.Join(root, driver.TaskSecretsDir), uid, gid); err != nil {
		return err
	}
	if err := buildDev(filepath.Join(root, "dev")); err != nil {
		return err
	}
	if err := mountIn(root, "/proc", "proc", "proc", unix.MS_NOSUID|unix.MS_NODEV|unix.MS_NOEXEC, ""); err != nil {
		return err
	}
	for _, m := range iso.Mounts {
		if err := bindInto(root, m); err != nil {
			return err
		}
	}
	return mountFS("", root, "", unix.MS_REMOUNT|unix.MS_RDONLY|unix.MS_NOSUID|unix.MS_NODEV, "mode=0755,size=1m")
}

// taskDirs makes the task's local, secrets and tmp dirs beneath its task
// dir (never through a symlink) and returns their paths.
func taskDirs(spec *executorSpec) (map[string]string, error) {
	out := map[string]string{}
	for name, mode := range map[string]os.FileMode{localDirName: 0o777, secretsDirName: 0o700, tmpDirName: 0o777 | os.ModeSticky} {
		dir := filepath.Join(spec.Dir, name)
		if err := safepath.MkdirAll(spec.root(), dir, 0o700); err != nil {
			return nil, fmt.Errorf("task dir %s: %w", name, err)
		}
		fi, err := os.Lstat(dir)
		if err != nil || !fi.IsDir() {
			return nil, fmt.Errorf("task dir %s: %w: not a directory", name, safepath.ErrSymlink)
		}
		if err := os.Chmod(dir, mode); err != nil {
			return nil, err
		}
		out[name] = dir
	}
	return out, nil
}

// chrootEnv binds each existing host path of env read-only into root (a
// symlink, such as a merged /usr's /bin, is made as the same symlink).
func chrootEnv(root string, env map[string]string) error {
	dsts := make([]string, 0, len(env))
	bySrc := map[string]string{}
	for src, dst := range env {
		dsts = append(dsts, dst)
		bySrc[dst] = src
	}
	slices.Sort(dsts) // parents first
	for _, dst := range dsts {
		src := bySrc[dst]
		fi, err := os.Lstat(src)
		if err != nil {
			continue // Nomad's default set names paths not every host has
		}
		if fi.Mode()&os.ModeSymlink != 0 {
			link, err := os.Readlink(src)
			if err != nil {
				return err
			}
			p := filepath.Join(root, filepath.Clean("/"+dst))
			if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
				return err
			}
			if err := os.Symlink(link, p); err != nil {
				return fmt.Errorf("chroot_env %s: %w", src, err)
			}
			continue
		}
		if err := bindInto(root, driver.Mount{Source: src, Destination: dst, ReadOnly: true}); err != nil {
			return err
		}
	}
	return nil
}

// bindInto bind-mounts m.Source (and what is mounted beneath it) at its
// destination in root, read-only when asked.
func bindInto(root string, m driver.Mount) error {
	fi, err := os.Stat(m.Source)
	if err != nil {
		return fmt.Errorf("mount %s: %w", m.Source, err)
	}
	dst := filepath.Join(root, filepath.Clean("/"+m.Destination))
	if err := mountPoint(dst, fi.IsDir()); err != nil {
		return fmt.Errorf("mount point %s: %w", m.Destination, err)
	}
	if err := mountFS(m.Source, dst, "", unix.MS_BIND|unix.MS_REC, ""); err != nil {
		return err
	}
	if !m.ReadOnly {
		return nil
	}
	return mountFS("", dst, "", unix.MS_BIND|unix.MS_REMOUNT|unix.MS_RDONLY, "")
}

// mountPoint makes dst, a directory or an empty file.
func mountPoint(dst string, dir bool) error {
	if dir {
		return os.MkdirAll(dst, 0o755)
	}
	if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
		return err
	}
	f, err := os.OpenFile(dst, os.O_CREATE|os.O_RDONLY, 0o644)
	if err != nil {
		return err
	}
	return f.Close()
}

// mountIn mounts a file system at the directory path inside root.
func mountIn(root, path, source, fstype string, flags uintptr, data string) error {
	dst := filepath.Join(root, path)
	if err := os.MkdirAll(dst, 0o755); err != nil {
		return err
	}
	return mountFS(source, dst, fstype, flags, data)
}

func mountFS(source, target, fstype string, flags uintptr, data string) error {
	if err := unix.Mount(source, target, fstype, flags, data); err != nil {
		return fmt.Errorf("mount %s on %s: %w", orNone(source), target, err)
	}
	return nil
}

func orNone(s string) string {
	if s == "" {
		return "(remount)"
	}
	return s
}

// devices are an isolated task's /dev nodes (runc's default set).
var devices = []struct {
	name         string
	major, minor uint32
}{{"null", 1, 3}, {"zero", 1, 5}, {"full", 1, 7}, {"random", 1, 8}, {"urandom", 1, 9}, {"tty", 5, 0}}

// buildDev makes a minimal /dev: the usual character devices, a private
// devpts instance with /dev/ptmx, /dev/shm, and the /proc/self/fd links.
func buildDev(dev string) error {
	if err := os.MkdirAll(dev, 0o755); err != nil {
		return err
	}
	if err := mountFS("tmpfs", dev, "tmpfs", unix.MS_NOSUID|unix.MS_STRICTATIME, "mode=0755,size=64k"); err != nil {
		return err
	}
	for _, d := range devices {
		p := filepath.Join(dev, d.name)
		if err := unix.Mknod(p, unix.S_IFCHR|0o666, int(unix.Mkdev(d.major, d.minor))); err != nil {
			return fmt.Errorf("mknod %s: %w", p, err)
		}
		if err := os.Chmod(p, 0o666); err != nil {
			return err
		}
	}
	if err := mountIn(dev, "pts", "devpts", "devpts", unix.MS_NOSUID|unix.MS_NOEXEC, "newinstance,ptmxmode=0666,mode=0620"); err != nil {
		return err
	}
	if err := mountIn(dev, "shm", "shm", "tmpfs", unix.MS_NOSUID|unix.MS_NODEV|unix.MS_NOEXEC, "mode=1777,size=65536k"); err != nil {
		return err
	}
	links := map[string]string{"ptmx": "pts/ptmx", "fd": "/proc/self/fd", "stdin": "/proc/self/fd/0",
		"stdout": "/proc/self/fd/1", "stderr": "/proc/self/fd/2"}
	for name, target := range links {
		if err := os.Symlink(target, filepath.Join(dev, name)); err != nil {
			return err
		}
	}
	return nil
}

// pivotInto makes root the mount namespace's root and drops the old one.
func pivotInto(root string) error {
	if err := unix.Chdir(root); err != nil {
		return err
	}
	if err := unix.PivotRoot(".", "."); err != nil {
		return fmt.Errorf("pivot_root %s: %w", root, err)
	}
	if err := unix.Unmount(".", unix.MNT_DETACH); err != nil {
		return fmt.Errorf("detaching the old root: %w", err)
	}
	return unix.Chdir("/")
}

func credIDs(cred *syscall.Credential) (uint32, uint32) {
	if cred == nil {
		return 0, 0
	}
	return cred.Uid, cred.Gid
}
