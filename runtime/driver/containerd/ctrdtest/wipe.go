//go:build linux

package ctrdtest

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// runcRoot is where runc keeps its state, per namespace.
const runcRoot = "/run/containerd/runc"

// WipeState does to the daemon what a host reboot does: containerd, its
// shims and their tasks die at once, and what lives on tmpfs is lost:
// containerd's state dir (the tasks' rootfs unmounted first), runc's
// state, the shims' sockets and the tasks' cgroups. The root (images,
// snapshots, container records) stays; Start brings containerd back on it.
func (dm *Daemon) WipeState() error {
	dm.kill()
	state := filepath.Join(dm.dir, "state")
	errs := []error{dm.killShims(), dm.removeHostState(), unmountUnder(state)}
	if err := os.RemoveAll(state); err != nil {
		errs = append(errs, err)
	}
	return errors.Join(errs...)
}

// killShims kills the tasks of the shims this daemon started (every
// process below them), waits until the shims have reaped them, then
// kills the shims and waits until they are dead.
func (dm *Daemon) killShims() error {
	procs := readProcs()
	var shims []int
	for pid, p := range procs {
		if p.isShimOf(dm.sock) {
			shims = append(shims, pid)
		}
	}
	all := slices.Clone(shims)
	for i := 0; i < len(all); i++ { // all grows as it goes
		for pid, p := range procs {
			if p.ppid == all[i] && !slices.Contains(all, pid) {
				all = append(all, pid)
			}
		}
	}
	return errors.Join(killAll(all[len(shims):], all), killAll(shims, nil))
}

// killAll sends SIGKILL to pids and waits until each is gone, or a zombie
// that none of reapers is to reap.
func killAll(pids, reapers []int) error {
	for _, pid := range pids {
		if err := syscall.Kill(pid, syscall.SIGKILL); err != nil && !errors.Is(err, syscall.ESRCH) {
			return fmt.Errorf("ctrdtest: killing %d: %w", pid, err)
		}
	}
	return poll(10*time.Second, func() error {
		for _, pid := range pids {
			state, ppid, err := readStat(strconv.Itoa(pid))
			if err == nil && (state != "Z" || slices.Contains(reapers, ppid)) {
				return fmt.Errorf("ctrdtest: process %d (state %s) lives on after SIGKILL", pid, state)
			}
		}
		return nil
	})
}

// proc is what killShims needs to know of a process.
type proc struct {
	ppid int
	args []string
}

func (p proc) isShimOf(sock string) bool {
	return len(p.args) > 0 && strings.Contains(filepath.Base(p.args[0]), "containerd-shim") &&
		(slices.Contains(p.args, sock) || slices.Contains(p.args, "unix://"+sock))
}

// readProcs reads the parent and arguments of every process.
func readProcs() map[int]proc {
	procs := map[int]proc{}
	entries, _ := os.ReadDir("/proc")
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		_, ppid, err := readStat(e.Name())
		if err != nil {
			continue
		}
		cmdline, _ := os.ReadFile(filepath.Join("/proc", e.Name(), "cmdline"))
		procs[pid] = proc{ppid: ppid, args: strings.Split(strings.TrimRight(string(cmdline), "\x00"), "\x00")}
	}
	return procs
}

// readStat reads a process's state letter and parent from its stat file.
func readStat(pid string) (state string, ppid int, err error) {
	stat, err := os.ReadFile(filepath.Join("/proc", pid, "stat"))
	if err != nil {
		return "", 0, err
	}
	// "pid (comm) state ppid ...": comm may hold spaces and parens.
	fields := strings.Fields(string(stat[bytes.LastIndexByte(stat, ')')+1:]))
	if len(fields) < 2 {
		return "", 0, fmt.Errorf("ctrdtest: bad /proc/%s/stat", pid)
	}
	ppid, err = strconv.Atoi(fields[1])
	return fields[0], ppid, err
}

// removeHostState removes what runc and the shims keep outside the
// daemon's dir for each task whose bundle is in the state dir: runc's
// state, the shim's socket and the task's cgroups (a reboot wipes all);
// then the namespace dirs of Namespace() once they are empty.
func (dm *Daemon) removeHostState() error {
	bundles, _ := filepath.Glob(filepath.Join(dm.dir, "state", "io.containerd.runtime.v2.task", "*", "*"))
	var errs []error
	for _, b := range bundles {
		ns, id := filepath.Base(filepath.Dir(b)), filepath.Base(b)
		errs = append(errs, removeIfThere(filepath.Join(runcRoot, ns, id), os.RemoveAll),
			removeIfThere(shimSocket(dm.sock, ns, id), os.Remove), removeCgroups(ns, id))
	}
	// The daemon's own namespace leaves nothing behind. Other namespaces
	// may leave empty dirs: another daemon may be making tasks in them.
	_ = os.Remove(filepath.Join(runcRoot, dm.ns))
	nsDirs, _ := filepath.Glob(filepath.Join("/sys/fs/cgroup", "*", dm.ns))
	for _, dir := range append(nsDirs, filepath.Join("/sys/fs/cgroup", dm.ns)) {
		_ = os.Remove(dir) // once empty
	}
	return errors.Join(errs...)
}

// removeCgroups removes the cgroups runc made for a task (path /ns/id,
// containerd's default) in every hierarchy.
func removeCgroups(ns, id string) error {
	dirs, _ := filepath.Glob(filepath.Join("/sys/fs/cgroup", "*", ns, id))
	dirs = append(dirs, filepath.Join("/sys/fs/cgroup", ns, id))
	return poll(5*time.Second, func() error { // a dead task may leave its cgroup busy briefly
		var errs []error
		for _, dir := range dirs {
			errs = append(errs, removeIfThere(dir, os.Remove))
		}
		return errors.Join(errs...)
	})
}

func removeIfThere(path string, remove func(string) error) error {
	if err := remove(path); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("ctrdtest: %w", err)
	}
	return nil
}

// unmountUnder detaches every mount below dir, deepest first.
func unmountUnder(dir string) error {
	info, err := os.ReadFile("/proc/self/mountinfo")
	if err != nil {
		return err
	}
	var points []string
	for _, line := range strings.Split(string(info), "\n") {
		if f := strings.Fields(line); len(f) > 4 && strings.HasPrefix(f[4], dir+"/") {
			points = append(points, f[4])
		}
	}
	slices.SortFunc(points, func(a, b string) int { return len(b) - len(a) })
	for _, p := range points {
		if err := syscall.Unmount(p, syscall.MNT_DETACH); err != nil && !errors.Is(err, syscall.EINVAL) {
			return fmt.Errorf("ctrdtest: unmounting %s: %w", p, err)
		}
	}
	return nil
}

// poll calls check until it returns nil or timeout passes, and returns
// its last error.
func poll(timeout time.Duration, check func() error) error {
	deadline := time.Now().Add(timeout)
	tick := time.NewTicker(20 * time.Millisecond)
	defer tick.Stop()
	for {
		err := check()
		if err == nil || time.Now().After(deadline) {
			return err
		}
		<-tick.C
	}
}
