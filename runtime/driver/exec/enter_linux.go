package exec

import (
	"fmt"
	"os"
	osexec "os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"syscall"

	"golang.org/x/sys/unix"
)

// enterCommand runs argv in an isolated task's namespaces and root: the
// executor binary, as "enter", joins them and runs argv as the task's
// user with the task's capability set (ExecTask's view is the task's).
func (d *Driver) enterCommand(pid int, stateDir string, argv []string) *osexec.Cmd {
	args := append(append([]string{}, d.cfg.ExecutorArgs...), enterArg, strconv.Itoa(pid),
		filepath.Join(stateDir, specFile), "--")
	cmd := osexec.Command(d.cfg.ExecutorPath, append(args, argv...)...)
	cmd.Env = append([]string{}, d.cfg.ExecutorEnv...)
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	return cmd
}

// namespaces an enter joins, the mount namespace last (after it, the
// host's /proc is out of reach).
var namespaces = []struct {
	name string
	flag int
}{{"ipc", unix.CLONE_NEWIPC}, {"net", unix.CLONE_NEWNET}, {"pid", unix.CLONE_NEWPID}, {"mnt", unix.CLONE_NEWNS}}

// enterMain joins the namespaces of the task whose pid it is given, on a
// thread of its own, restricts that thread as the task is, and runs argv
// from it (a child forked there is born in the task's pid namespace and
// root), with this process's stdio. It exits as argv did.
func enterMain(args []string) int {
	if len(args) < 4 || args[2] != "--" {
		fmt.Fprintf(os.Stderr, "%v: usage: enter <pid> <spec> -- command...\n", ErrExecutorUsage)
		return 2
	}
	code, err := enter(args[0], args[1], args[3:])
	if err != nil {
		fmt.Fprintf(os.Stderr, "exec: %v\n", err)
		return 126
	}
	return code
}

func enter(pidArg, specPath string, argv []string) (int, error) {
	var spec executorSpec
	if err := readJSON(specPath, &spec); err != nil || spec.Isolation == nil {
		return 0, fmt.Errorf("%w: spec %s: %v", ErrExecutorUsage, specPath, err)
	}
	cred, err := lookupUser(spec.User)
	if err != nil {
		return 0, err
	}
	fds := make([]*os.File, len(namespaces))
	for i, ns := range namespaces {
		if fds[i], err = os.Open(fmt.Sprintf("/proc/%s/ns/%s", pidArg, ns.name)); err != nil {
			return 0, err
		}
		defer fds[i].Close()
	}
	runtime.LockOSThread() // never unlocked: the thread dies with the process
	if err := unix.Unshare(unix.CLONE_FS); err != nil {
		return 0, fmt.Errorf("unshare fs: %w", err)
	}
	for i, ns := range namespaces {
		if err := unix.Setns(int(fds[i].Fd()), ns.flag); err != nil {
			return 0, fmt.Errorf("joining the task's %s namespace: %w", ns.name, err)
		}
	}
	if err := restrict(spec.Isolation.Caps); err != nil {
		return 0, err
	}
	path, err := lookPath(argv[0], envValue(spec.Env, "PATH"))
	if filepath.IsAbs(argv[0]) {
		path, err = argv[0], nil
	}
	if err != nil {
		return 0, err
	}
	cmd := osexec.Command(path, argv[1:]...)
	cmd.Args[0] = argv[0]
	cmd.Env = spec.Env
	cmd.Dir = "/local"
	cmd.Stdin, cmd.Stdout, cmd.Stderr = os.Stdin, os.Stdout, os.Stderr
	cmd.SysProcAttr = &syscall.SysProcAttr{Credential: cred}
	if _, err := unix.IoctlGetTermios(0, unix.TCGETS); err == nil {
		// on a terminal: the child leads a session of its own in the
		// task's pid namespace, so its shell can manage its jobs; the
		// terminal's hangup (the driver closes it) ends that session
		cmd.SysProcAttr.Setsid, cmd.SysProcAttr.Setctty = true, true
	}
	if err := cmd.Start(); err != nil {
		return 0, err
	}
	_ = cmd.Wait()
	return exitStatus(cmd.ProcessState).ExitCode, nil
}
