package logrotate

import (
	"errors"
	"fmt"
	"io/fs"
)

var (
	// ErrOptions is a Writer asked for fewer than one file or byte.
	ErrOptions = errors.New("logrotate: max files and max bytes must be at least 1")
	// ErrNoLog is a log with no file yet; it wraps fs.ErrNotExist.
	ErrNoLog = fmt.Errorf("logrotate: no log file yet: %w", fs.ErrNotExist)
	// ErrNotRegular is a log file that is a fifo, a device or a directory.
	ErrNotRegular = errors.New("logrotate: not a regular file")
	// ErrOffset is a negative offset.
	ErrOffset = errors.New("logrotate: offset must not be negative")
)
