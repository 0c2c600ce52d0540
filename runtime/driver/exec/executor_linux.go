package exec

import (
	"errors"
	"fmt"
	"os"
	osexec "os/exec"
	"os/signal"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"golang.org/x/sys/unix"
)

// ExecutorMain is the executor's entry point. args are the arguments after
// the program name: an optional leading "executor", then the spec path. It
// runs the task, writes exit.json and returns the process's exit code: 0
// when the exit status was written (whatever the task's), non-zero when
// the executor itself failed.
func ExecutorMain(args []string) int {
	if len(args) > 0 && args[0] == "executor" {
		args = args[1:]
	}
	switch {
	case len(args) == 2 && args[0] == initArg:
		return initMain(args[1])
	case len(args) > 0 && args[0] == enterArg:
		return enterMain(args[1:])
	}
	if len(args) != 1 {
		fmt.Fprintf(os.Stderr, "%v: usage: executor <spec.json>\n", ErrExecutorUsage)
		return 2
	}
	// The driver signals the task's process group, never the executor:
	// catch (not ignore, which children would inherit) what would kill us.
	signal.Notify(make(chan os.Signal, 1), syscall.SIGTERM, syscall.SIGINT, syscall.SIGHUP)
	var spec executorSpec
	if err := readJSON(args[0], &spec); err != nil || spec.StateDir == "" {
		fmt.Fprintf(os.Stderr, "%v: reading spec %s: %v\n", ErrExecutorUsage, args[0], err)
		return 2
	}
	ef, err := runTask(&spec)
	if err != nil {
		fmt.Fprintf(os.Stderr, "executor: %v\n", err)
		ef = &exitFile{ExitCode: -1, StartError: err.Error()}
	}
	ef.FinishedAt = time.Now().UTC()
	if err := writeJSONAtomic(spec.root(), filepath.Join(spec.StateDir, exitFileName), ef); err != nil {
		fmt.Fprintf(os.Stderr, "executor: writing exit status: %v\n", err)
		return 1
	}
	return 0
}

// runTask starts the task, records its pid, waits for it and kills what is
// left of its process group. An error means the task did not start.
func runTask(spec *executorSpec) (*exitFile, error) {
	cmd, ready, err := taskCommand(spec)
	if err != nil {
		return nil, err
	}
	leave := func() {}
	if spec.Isolation == nil { // an isolated task's init joins the group itself (initTask)
		if leave, err = enterCgroup(spec); err != nil {
			return nil, err
		}
	}
	logs := newTaskLogs(spec)
	err = startWithLogs(cmd, spec, logs)
	leave()
	if err != nil {
		return nil, err
	}
	if err := awaitInit(cmd, ready); err != nil {
		_ = cmd.Wait()
		return nil, err
	}
	pid := cmd.Process.Pid
	// Not yet reaped, so /proc/<pid> exists even if the task has exited.
	taskTicks, err1 := StartTicks(pid)
	selfTicks, err2 := StartTicks(os.Getpid())
	pf := &pidFile{Pid: pid, StartTicks: taskTicks, ExecutorPid: os.Getpid(), ExecutorStartTicks: selfTicks}
	if err := errors.Join(err1, err2); err != nil {
		_ = syscall.Kill(-pid, syscall.SIGKILL)
		_ = cmd.Wait()
		return nil, err
	}
	if err := writeJSONAtomic(spec.root(), filepath.Join(spec.StateDir, pidFileName), pf); err != nil {
		_ = syscall.Kill(-pid, syscall.SIGKILL)
		_ = cmd.Wait()
		return nil, err
	}
	waitUnreaped(pid)
	// The exited task still holds its group id: kill its leftover children.
	_ = syscall.Kill(-pid, syscall.SIGKILL)
	oom := endCgroup(spec) // and its daemons, which left the group
	_ = cmd.Wait()
	logs.wait()
	ef := exitStatus(cmd.ProcessState)
	ef.OOMKilled = oom
	return ef, nil
}

// taskCommand builds the task's command: the name is looked up in the
// task's PATH; a relative path is relative to the task dir. An isolated
// task's command is the init process that becomes the task; its pipe
// says when it has (awaitInit).
func taskCommand(spec *executorSpec) (*osexec.Cmd, *os.File, error) {
	if spec.Isolation != nil {
		return isolatedCommand(spec)
	}
	path := spec.Command
	if !strings.Contains(path, "/") {
		if err := os.Setenv("PATH", envValue(spec.Env, "PATH")); err != nil {
			return nil, nil, err
		}
		lp, err := osexec.LookPath(path)
		if err != nil {
			return nil, nil, err
		}
		path = lp
	}
	cred, err := credential(spec.User)
	if err != nil {
		return nil, nil, err
	}
	cmd := osexec.Command(path, spec.Args...)
	cmd.Args[0] = spec.Command
	cmd.Env = spec.Env
	cmd.Dir = spec.Dir
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Credential: cred}
	return cmd, nil, nil
}

// startWithLogs starts cmd with stdout and stderr written to the task's
// log files (stdin is /dev/null). The executor runs as root: a log file
// that a task replaced by a symlink out of the allocation dir is refused,
// not followed.
func startWithLogs(cmd *osexec.Cmd, spec *executorSpec, logs *taskLogs) error {
	stdout, err := logs.open(spec.StdoutPath)
	if err != nil {
		return err
	}
	defer stdout.Close()
	stderr, err := logs.open(spec.StderrPath)
	if err != nil {
		return err
	}
	defer stderr.Close()
	cmd.Stdout, cmd.Stderr = stdout, stderr
	return startInNetns(spec.NetnsPath, cmd.Start)
}

// waitUnreaped blocks until pid has exited, leaving it a zombie so that its
// process group id cannot be reused yet.
func waitUnreaped(pid int) {
	var info unix.Siginfo
	for {
		err := unix.Waitid(unix.P_PID, pid, &info, unix.WEXITED|unix.WNOWAIT, nil)
		if !errors.Is(err, unix.EINTR) {
			return
		}
	}
}

// exitStatus encodes how the task ended; a signal death is 128+signal.
func exitStatus(ps *os.ProcessState) *exitFile {
	ws, ok := ps.Sys().(syscall.WaitStatus)
	if !ok {
		return &exitFile{ExitCode: ps.ExitCode()}
	}
	if ws.Signaled() {
		return &exitFile{ExitCode: 128 + int(ws.Signal()), Signal: int(ws.Signal())}
	}
	return &exitFile{ExitCode: ws.ExitStatus()}
}

// envValue finds KEY's value in a KEY=VALUE list.
func envValue(env []string, key string) string {
	for _, kv := range env {
		if k, v, ok := strings.Cut(kv, "="); ok && k == key {
			return v
		}
	}
	return ""
}
