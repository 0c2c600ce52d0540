package exec

import "github.com/troupe-dev/troupe/runtime/driver"

// logSpec is how the executor rotates the task's stdout and stderr
// (runtime/logrotate): each is StdoutPath/StderrPath + ".N".
type logSpec struct {
	MaxFiles     int
	MaxFileBytes int64
}

// logSpecOf is cfg's rotation, nil when it sets none (a task config from
// before rotation, or a test's): then the files are appended to as they
// are.
func logSpecOf(cfg *driver.TaskConfig) *logSpec {
	if cfg.LogMaxFiles < 1 || cfg.LogMaxFileSizeMB < 1 {
		return nil
	}
	return &logSpec{MaxFiles: cfg.LogMaxFiles, MaxFileBytes: int64(cfg.LogMaxFileSizeMB) << 20}
}
