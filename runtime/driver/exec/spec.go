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
	StateDir   string
	// NetnsPath is the network namespace the task runs in; empty: the
	// executor's (the host's).
	NetnsPath string `json:",omitempty"`
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
	if cfg.NetnsPath != "" && !filepath.IsAbs(cfg.NetnsPath) {
		return nil, fmt.Errorf("%w: %s: network namespace %q is not an absolute path",
			driver.ErrInvalidConfig, cfg.ID, cfg.NetnsPath)
	}
	return &executorSpec{
		Command: command, Args: args, Env: envList(cfg.Env), Dir: cfg.TaskDir, User: cfg.User,
		StdoutPath: orDevNull(cfg.StdoutPath), StderrPath: orDevNull(cfg.StderrPath),
		StateDir: filepath.Join(cfg.TaskDir, stateDirName), NetnsPath: cfg.NetnsPath,
	}, nil
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

// writeJSONAtomic writes v to path through a synced temp file and a rename,
// so readers see the old file or the whole new one.
func writeJSONAtomic(path string, v any) error {
	data, err := json.Marshal(v)
	if err != nil {
		return err
	}
	f, err := os.CreateTemp(filepath.Dir(path), filepath.Base(path)+".tmp*")
	if err != nil {
		return err
	}
	defer os.Remove(f.Name()) // a no-op once renamed
	if _, err := f.Write(data); err != nil {
		f.Close()
		return err
	}
	if err := f.Sync(); err != nil {
		f.Close()
		return err
	}
	if err := f.Close(); err != nil {
		return err
	}
	return os.Rename(f.Name(), path)
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
