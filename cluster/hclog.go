package cluster

import (
	"bytes"
	"context"
	"io"
	"log"
	"log/slog"
	"sync/atomic"

	"github.com/hashicorp/go-hclog"
)

// hclogAdapter sends hashicorp/raft's hclog output to a slog.Logger.
// Raft's info messages are demoted to debug (raft is chatty at info);
// warnings and errors stay what they are.
type hclogAdapter struct {
	logger *slog.Logger
	name   string
	args   []any
	level  *atomic.Int32 // hclog.Level below which messages are dropped
}

var _ hclog.Logger = (*hclogAdapter)(nil)

func newHclogAdapter(logger *slog.Logger, name string) *hclogAdapter {
	lvl := &atomic.Int32{}
	lvl.Store(int32(hclog.Trace))
	return &hclogAdapter{logger: logger, name: name, level: lvl}
}

// slogLevel maps an hclog level to the slog level it is logged at.
func slogLevel(l hclog.Level) slog.Level {
	switch l {
	case hclog.Warn:
		return slog.LevelWarn
	case hclog.Error:
		return slog.LevelError
	case hclog.Trace:
		return slog.LevelDebug - 4
	default: // Debug, Info, NoLevel
		return slog.LevelDebug
	}
}

// firstElection is what raft warns when a server that has never seen a
// leader starts its first election: expected at every start, so demoted.
const firstElection = "heartbeat timeout reached, starting election"

// demote lowers raft warnings that are routine.
func demote(level hclog.Level, msg string, args []any) hclog.Level {
	if level != hclog.Warn || msg != firstElection {
		return level
	}
	for i := 0; i+1 < len(args); i += 2 {
		if args[i] == "last-leader-id" && args[i+1] == "" {
			return hclog.Info
		}
	}
	return level
}

func (a *hclogAdapter) Log(level hclog.Level, msg string, args ...any) {
	level = demote(level, msg, args)
	if level < hclog.Level(a.level.Load()) || !a.logger.Enabled(context.Background(), slogLevel(level)) {
		return
	}
	all := make([]any, 0, len(a.args)+len(args)+2)
	if a.name != "" {
		all = append(all, "logger", a.name)
	}
	all = append(append(all, a.args...), args...)
	a.logger.Log(context.Background(), slogLevel(level), msg, all...)
}

func (a *hclogAdapter) Trace(msg string, args ...any) { a.Log(hclog.Trace, msg, args...) }
func (a *hclogAdapter) Debug(msg string, args ...any) { a.Log(hclog.Debug, msg, args...) }
func (a *hclogAdapter) Info(msg string, args ...any)  { a.Log(hclog.Info, msg, args...) }
func (a *hclogAdapter) Warn(msg string, args ...any)  { a.Log(hclog.Warn, msg, args...) }
func (a *hclogAdapter) Error(msg string, args ...any) { a.Log(hclog.Error, msg, args...) }

func (a *hclogAdapter) enabled(l hclog.Level) bool {
	return l >= hclog.Level(a.level.Load()) && a.logger.Enabled(context.Background(), slogLevel(l))
}

func (a *hclogAdapter) IsTrace() bool { return a.enabled(hclog.Trace) }
func (a *hclogAdapter) IsDebug() bool { return a.enabled(hclog.Debug) }
func (a *hclogAdapter) IsInfo() bool  { return a.enabled(hclog.Info) }
func (a *hclogAdapter) IsWarn() bool  { return a.enabled(hclog.Warn) }
func (a *hclogAdapter) IsError() bool { return a.enabled(hclog.Error) }

func (a *hclogAdapter) ImpliedArgs() []any { return a.args }

func (a *hclogAdapter) With(args ...any) hclog.Logger {
	c := *a
	c.args = append(append([]any{}, a.args...), args...)
	return &c
}

func (a *hclogAdapter) Name() string { return a.name }

func (a *hclogAdapter) Named(name string) hclog.Logger {
	if a.name != "" {
		name = a.name + "." + name
	}
	return a.ResetNamed(name)
}

func (a *hclogAdapter) ResetNamed(name string) hclog.Logger {
	c := *a
	c.name = name
	return &c
}

func (a *hclogAdapter) SetLevel(level hclog.Level) { a.level.Store(int32(level)) }

func (a *hclogAdapter) GetLevel() hclog.Level { return hclog.Level(a.level.Load()) }

func (a *hclogAdapter) StandardLogger(opts *hclog.StandardLoggerOptions) *log.Logger {
	return log.New(a.StandardWriter(opts), "", 0)
}

func (a *hclogAdapter) StandardWriter(opts *hclog.StandardLoggerOptions) io.Writer {
	level := hclog.Info
	if opts != nil && opts.ForceLevel != hclog.NoLevel {
		level = opts.ForceLevel
	}
	return &lineWriter{a: a, level: level}
}

// lineWriter logs each write (a line from a standard logger) as one message.
type lineWriter struct {
	a     *hclogAdapter
	level hclog.Level
}

func (w *lineWriter) Write(p []byte) (int, error) {
	w.a.Log(w.level, string(bytes.TrimRight(p, "\n")))
	return len(p), nil
}
