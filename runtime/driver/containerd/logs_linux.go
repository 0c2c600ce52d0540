package containerd

import (
	"fmt"
	"path/filepath"

	"github.com/containerd/containerd/v2/pkg/cio"

	"github.com/troupe-dev/troupe/runtime/driver"
	"github.com/troupe-dev/troupe/runtime/logmon"
)

// taskIO is how a task's stdout and stderr reach their logs. With a logs
// block (LogMaxFiles, LogMaxFileSizeMB), through a log forwarder that the
// shim runs as its binary:// logger: it writes the rotated files
// (StdoutPath.N, StderrPath.N) for as long as the shim lives, agent or no
// agent. Without one, the shim appends each stream to its file.
func (d *Driver) taskIO(cfg *driver.TaskConfig) (cio.Creator, error) {
	spec, ok := d.logSpec(cfg)
	if !ok {
		if err := createLogFiles(cfg); err != nil {
			return nil, err
		}
		return logFiles(orDevNull(cfg.StdoutPath), orDevNull(cfg.StderrPath)), nil
	}
	// the forwarder reports nothing the driver sees: open the files here
	// first, so that a bad path fails the start
	if err := logmon.Prepare(spec); err != nil {
		return nil, err
	}
	args, err := spec.Args()
	if err != nil {
		return nil, err
	}
	if !filepath.IsAbs(d.cfg.LogmonPath) {
		return nil, fmt.Errorf("log forwarder binary %q is not an absolute path", d.cfg.LogmonPath)
	}
	// one query key: the shim turns the query into argument pairs, in
	// map order, so this is exactly `logmon <spec>`
	return cio.BinaryIO(d.cfg.LogmonPath, map[string]string{args[0]: args[1]}), nil
}

// logSpec is the forwarder spec of cfg's logs; false when they do not
// rotate (no logs block, or no log at all).
func (d *Driver) logSpec(cfg *driver.TaskConfig) (logmon.Spec, bool) {
	if cfg.LogMaxFiles < 1 || cfg.LogMaxFileSizeMB < 1 || (cfg.StdoutPath == "" && cfg.StderrPath == "") {
		return logmon.Spec{}, false
	}
	return logmon.Spec{Stdout: cfg.StdoutPath, Stderr: cfg.StderrPath, Root: filepath.Dir(cfg.TaskDir),
		MaxFiles: cfg.LogMaxFiles, MaxBytes: int64(cfg.LogMaxFileSizeMB) * d.cfg.logUnit}, true
}
