package exec

import (
	"errors"
	"fmt"
	"io"
	"os"
	osexec "os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"syscall"

	"golang.org/x/sys/unix"
)

// Arguments of the executor's own helper modes (after "executor").
const (
	initArg  = "init"  // init <spec>: become an isolated task
	enterArg = "enter" // enter <pid> <spec> -- argv: run argv in a task's namespaces
)

// initPipeFd is the fd on which the init process reports why it could not
// start the task; it is closed on exec, so EOF alone means it started.
const initPipeFd = 3

// isolatedCommand is an isolated task's command: this binary again, as
// "init", in new mount, pid and ipc namespaces; it builds the root and
// executes the task, which so becomes pid 1 of its namespace. The pipe's
// read end is returned for awaitInit.
func isolatedCommand(spec *executorSpec) (*osexec.Cmd, *os.File, error) {
	r, w, err := os.Pipe()
	if err != nil {
		return nil, nil, err
	}
	args := append(append([]string{}, os.Args[1:len(os.Args)-1]...), initArg, filepath.Join(spec.StateDir, specFile))
	cmd := osexec.Command("/proc/self/exe", args...)
	cmd.Args[0] = os.Args[0]
	cmd.Env = os.Environ()
	cmd.Dir = "/"
	cmd.ExtraFiles = []*os.File{w}
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true,
		Cloneflags: unix.CLONE_NEWNS | unix.CLONE_NEWPID | unix.CLONE_NEWIPC}
	return cmd, r, nil
}

// awaitInit waits for the started init process to execute the task (or
// to say why it could not). It closes the pipe.
func awaitInit(cmd *osexec.Cmd, r *os.File) error {
	if r == nil {
		return nil
	}
	defer r.Close()
	for _, f := range cmd.ExtraFiles {
		_ = f.Close()
	}
	msg, err := io.ReadAll(r)
	if err != nil {
		return err
	}
	if len(msg) > 0 {
		return fmt.Errorf("isolating the task: %s", msg)
	}
	return nil
}

// initMain is the init process of an isolated task: it builds the root,
// pivots into it, drops what the task may not keep and executes it. It
// returns only on failure, having written why to the init pipe.
func initMain(specPath string) int {
	runtime.LockOSThread() // capabilities and no_new_privs belong to the thread that executes
	pipe := os.NewFile(initPipeFd, "init-pipe")
	unix.CloseOnExec(initPipeFd)
	err := initTask(specPath)
	fmt.Fprint(pipe, err.Error())
	return 127
}

func initTask(specPath string) error {
	var spec executorSpec
	if err := readJSON(specPath, &spec); err != nil {
		return err
	}
	if spec.Isolation == nil {
		return fmt.Errorf("%w: spec %s has no isolation", ErrExecutorUsage, specPath)
	}
	cred, err := lookupUser(spec.User)
	if err != nil {
		return err
	}
	if err := buildRoot(&spec, filepath.Join(spec.StateDir, rootDirName), cred); err != nil {
		return err
	}
	// The task's cgroup is joined here, just before the root is entered and
	// the task executed, not by the executor before it starts init: init is
	// a Go program (the agent's binary), whose start-up memory would be
	// charged to the task's limit (a race-detector build's exceeds 64 MiB).
	// Charges made before do not move with the process (cgroup v1 without
	// move_charge_at_immigrate; v2 never moves them).
	if err := joinCgroup(&spec); err != nil {
		return err
	}
	if err := pivotInto(filepath.Join(spec.StateDir, rootDirName)); err != nil {
		return err
	}
	path, err := resolveCommand(spec.Command, spec.Env)
	if err != nil {
		return err
	}
	if err := unix.Chdir("/local"); err != nil {
		return err
	}
	if err := restrict(spec.Isolation.Caps); err != nil {
		return err
	}
	if err := setCredential(cred); err != nil {
		return err
	}
	return unix.Exec(path, append([]string{spec.Command}, spec.Args...), spec.Env)
}

// resolveCommand finds the task's command inside its root: a name in the
// task's PATH, a relative path from the root (Nomad's task dir).
func resolveCommand(command string, env []string) (string, error) {
	if strings.Contains(command, "/") {
		return filepath.Join("/", command), nil
	}
	if err := os.Setenv("PATH", envValue(env, "PATH")); err != nil {
		return "", err
	}
	return osexec.LookPath(command)
}

// restrict limits the calling thread, and what it executes or forks, to
// the capability bounding set caps, with no_new_privs.
func restrict(caps []string) error {
	keep := map[uintptr]bool{}
	for _, c := range caps {
		n, ok := capNumbers[c]
		if !ok {
			return fmt.Errorf("unknown capability %q", c)
		}
		keep[n] = true
	}
	for c := uintptr(0); c <= lastCap(); c++ {
		if keep[c] {
			continue
		}
		if err := unix.Prctl(unix.PR_CAPBSET_DROP, c, 0, 0, 0); err != nil && !errors.Is(err, unix.EINVAL) {
			return fmt.Errorf("dropping capability %d: %w", c, err)
		}
	}
	return unix.Prctl(unix.PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0)
}

// setCredential becomes the task's user (groups, gid, then uid).
func setCredential(cred *syscall.Credential) error {
	groups := make([]int, len(cred.Groups))
	for i, g := range cred.Groups {
		groups[i] = int(g)
	}
	if err := syscall.Setgroups(groups); err != nil {
		return fmt.Errorf("setgroups: %w", err)
	}
	if err := syscall.Setgid(int(cred.Gid)); err != nil {
		return fmt.Errorf("setgid %d: %w", cred.Gid, err)
	}
	if err := syscall.Setuid(int(cred.Uid)); err != nil {
		return fmt.Errorf("setuid %d: %w", cred.Uid, err)
	}
	return nil
}

// lastCap is the highest capability the kernel knows.
func lastCap() uintptr {
	data, err := os.ReadFile("/proc/sys/kernel/cap_last_cap")
	var n uintptr
	if err == nil {
		_, err = fmt.Sscan(string(data), &n)
	}
	if err != nil {
		return unix.CAP_LAST_CAP
	}
	return n
}

// capNumbers names the capabilities a task's set may keep.
var capNumbers = map[string]uintptr{
	"audit_write": unix.CAP_AUDIT_WRITE, "chown": unix.CAP_CHOWN, "dac_override": unix.CAP_DAC_OVERRIDE,
	"fowner": unix.CAP_FOWNER, "fsetid": unix.CAP_FSETID, "kill": unix.CAP_KILL, "mknod": unix.CAP_MKNOD,
	"net_bind_service": unix.CAP_NET_BIND_SERVICE, "setfcap": unix.CAP_SETFCAP, "setgid": unix.CAP_SETGID,
	"setpcap": unix.CAP_SETPCAP, "setuid": unix.CAP_SETUID, "sys_chroot": unix.CAP_SYS_CHROOT,
}
