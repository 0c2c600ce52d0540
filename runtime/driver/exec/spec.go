package exec

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"time"

	"github.com/troupe-dev/troupe/runtime/driver"
	"github.com/troupe-dev/troupe/runtime/safepath"
)

// Files of the executor's state directory, <TaskDir>/.executor.
const (
	stateDirName = ".executor"
	specFile     = "spec.json"
	pidFileName  = "pid.json"
	exitFileName = "exit.json"
	logFileName  = "executor.log"
)

// defaultPath is the task's PATH when its env has none.
const defaultPath = "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"

// executorSpec is what the driver tells the executor to run.
type executorSpec struct {
	Command    string
	Args       []string
	Env        []string // KEY=VALUE, sorted
	Dir        string
	User       string
	StdoutPath string
	StderrPath string
	Logs       *logSpec `json:",omitempty"` // nil: the log files are appended to as they are
	StateDir   string
	// Root is the task dir's parent (the allocation dir): every file the
	// driver and the executor write lies beneath it, and a symlink planted
	// there that leads out of it is refused (safepath).
	Root string `json:",omitempty"`
	// NetnsPath is the network namespace the task runs in; empty: the
	// executor's (the host's).
	NetnsPath string `json:",omitempty"`
	// Isolation, when set, has the executor run the task in a root and
	// namespaces of its own (isolation.go, init_linux.go).
	Isolation *isolationSpec `json:",omitempty"`
	// Cgroup is the task's cgroup (cgroup_linux.go), which the executor
	// enters before it starts the task; empty: none.
	Cgroup string `json:",omitempty"`
}

// pidFile is written by the executor once the task runs.
type pidFile struct {
	Pid                int
	StartTicks         uint64
	ExecutorPid        int
	ExecutorStartTicks uint64
}

// exitFile is written by the executor when the task has ended.
type exitFile struct {
	ExitCode   int
	Signal     int
	OOMKilled  bool
	FinishedAt time.Time
	StartError string `json:",omitempty"`
}

// handleState is the exec driver's TaskHandle.State.
type handleState struct {
	ExecutorPid        int
	ExecutorStartTicks uint64
	StateDir           string
	Pgid               int
	// Cgroup and Cpuset are the task's cgroup and the cores it holds.
	Cgroup string `json:",omitempty"`
	Cpuset string `json:",omitempty"`
}

// buildSpec checks a task config and turns it into an executor spec.
func buildSpec(cfg *driver.TaskConfig) (*executorSpec, error) {
	if cfg == nil || cfg.ID == "" || cfg.TaskDir == "" {
		return nil, fmt.Errorf("%w: task id and task dir are required", driver.ErrInvalidConfig)
	}
	command, _ := cfg.Config["command"].(string)
	if command == "" {
		return nil, fmt.Errorf("%w: %s: exec needs a \"command\" string", driver.ErrInvalidConfig, cfg.ID)
	}
	args, err := stringList(cfg.Config["args"])
	if err != nil {
		return nil, fmt.Errorf("%w: %s: \"args\": %w", driver.ErrInvalidConfig, cfg.ID, err)
	}
	if err := checkPaths(cfg); err != nil {
		return nil, err
	}
	if cfg.NetnsPath != "" && !filepath.IsAbs(cfg.NetnsPath) {
		return nil, fmt.Errorf("%w: %s: network namespace %q is not an absolute path",
			driver.ErrInvalidConfig, cfg.ID, cfg.NetnsPath)
	}
	return &executorSpec{
		Command: command, Args: args, Env: envList(cfg.Env), Dir: cfg.TaskDir, User: cfg.User,
		StdoutPath: orDevNull(cfg.StdoutPath), StderrPath: orDevNull(cfg.StderrPath),
		StateDir: filepath.Join(cfg.TaskDir, stateDirName), NetnsPath: cfg.NetnsPath,
		Root: filepath.Dir(cfg.TaskDir), Logs: logSpecOf(cfg),
	}, nil
}

// checkPaths refuses a task whose names would lead its files out of its
// allocation dir (the client checks them first; this holds for any
// caller): the allocation ID and task name must be plain path elements,
// the task dir a clean absolute path, and the log files beneath the task
// dir's parent.
func checkPaths(cfg *driver.TaskConfig) error {
	for _, n := range []struct{ kind, name string }{{"allocation ID", cfg.AllocID}, {"task", cfg.TaskName}} {
		if err := safepath.CheckName(n.kind, n.name); err != nil {
			return fmt.Errorf("%w: %s: %w", driver.ErrInvalidConfig, cfg.ID, err)
		}
	}
	if !filepath.IsAbs(cfg.TaskDir) || filepath.Clean(cfg.TaskDir) != cfg.TaskDir {
		return fmt.Errorf("%w: %s: task dir %q is not a clean absolute path", driver.ErrInvalidConfig, cfg.ID, cfg.TaskDir)
	}
	for _, p := range []string{cfg.StdoutPath, cfg.StderrPath} {
		if p != "" && p != os.DevNull && !safepath.Within(filepath.Dir(cfg.TaskDir), p) {
			return fmt.Errorf("%w: %s: log file %q is outside the allocation dir", driver.ErrInvalidConfig, cfg.ID, p)
		}
	}
	return nil
}

// root is the directory the spec's files lie beneath (specs written
// before Root existed: the task dir's parent).
func (s *executorSpec) root() string {
	if s.Root != "" {
		return s.Root
	}
	return filepath.Dir(s.Dir)
}

// checkTaskDir makes sure the task dir is a directory, not a symlink: the
// agent must not follow a link planted there out of the allocation dir.
func checkTaskDir(spec *executorSpec) error {
	fi, err := safepath.Lstat(spec.root(), spec.Dir)
	if err != nil {
		return fmt.Errorf("%w: task dir: %w", driver.ErrInvalidConfig, err)
	}
	if !fi.IsDir() {
		return fmt.Errorf("%w: task dir %s: %w", driver.ErrInvalidConfig, spec.Dir, safepath.ErrSymlink)
	}
	return nil
}

// openLog opens a log file for appending, beneath the spec's root (or
// /dev/null).
func openLog(spec *executorSpec, path string, perm os.FileMode) (*os.File, error) {
	const flags = os.O_CREATE | os.O_WRONLY | os.O_APPEND
	if path == os.DevNull {
		return os.OpenFile(path, os.O_WRONLY, 0)
	}
	return safepath.OpenFile(spec.root(), path, flags, perm)
}

// stringList reads a structpb list of strings ([]any) or a []string.
func stringList(v any) ([]string, error) {
	switch l := v.(type) {
	case nil:
		return nil, nil
	case []string:
		return slices.Clone(l), nil
	case []any:
		out := make([]string, 0, len(l))
		for i, e := range l {
			s, ok := e.(string)
			if !ok {
				return nil, fmt.Errorf("element %d is a %T, not a string", i, e)
			}
			out = append(out, s)
		}
		return out, nil
	}
	return nil, fmt.Errorf("a %T, not a list of strings", v)
}

// envList renders env as sorted KEY=VALUE, adding a default PATH.
func envList(env map[string]string) []string {
	out := make([]string, 0, len(env)+1)
	for k, v := range env {
		out = append(out, k+"="+v)
	}
	if _, ok := env["PATH"]; !ok {
		out = append(out, "PATH="+defaultPath)
	}
	slices.Sort(out)
	return out
}

func orDevNull(p string) string {
	if p == "" {
		return os.DevNull
	}
	return p
}

// writeJSONAtomic writes v to path, beneath base, through a synced temp
// file and a rename, so readers see the old file or the whole new one.
func writeJSONAtomic(base, path string, v any) error {
	data, err := json.Marshal(v)
	if err != nil {
		return err
	}
	return safepath.WriteFileAtomic(base, path, data, 0o600)
}

func readJSON(path string, v any) error {
	data, err := os.ReadFile(path)
	if err != nil {
		return err
	}
	return json.Unmarshal(data, v)
}

// readExit turns the executor's exit.json into a result; a missing file
// means the executor died before the task ended.
func readExit(stateDir string) *driver.ExitResult {
	var ef exitFile
	err := readJSON(filepath.Join(stateDir, exitFileName), &ef)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return &driver.ExitResult{ExitCode: -1, Err: ErrExecutorLost}
	case err != nil:
		return &driver.ExitResult{ExitCode: -1, Err: fmt.Errorf("%w: %w", ErrExecutorLost, err)}
	case ef.StartError != "":
		return &driver.ExitResult{ExitCode: ef.ExitCode, Err: fmt.Errorf("%w: %s", ErrTaskStart, ef.StartError)}
	}
	return &driver.ExitResult{ExitCode: ef.ExitCode, Signal: ef.Signal, OOMKilled: ef.OOMKilled}
}

func exitFileExists(stateDir string) bool {
	_, err := os.Stat(filepath.Join(stateDir, exitFileName))
	return err == nil
}
