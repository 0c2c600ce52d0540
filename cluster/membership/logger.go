package membership

import (
	"context"
	"log"
	"log/slog"
	"strings"
)

// newStdLogger adapts l to the *log.Logger memberlist writes to. memberlist
// prefixes each line with its level ("[DEBUG]", "[INFO]", "[WARN]",
// "[ERR]"); its DEBUG and INFO lines become slog Debug records, so that an
// agent logging at Info prints nothing from memberlist in normal operation,
// and WARN and ERR lines become Warn records.
func newStdLogger(l *slog.Logger) *log.Logger {
	return log.New(logWriter{l: l}, "", 0)
}

type logWriter struct{ l *slog.Logger }

func (w logWriter) Write(p []byte) (int, error) {
	level, msg := parseLogLine(string(p))
	ctx := context.Background()
	if w.l.Enabled(ctx, level) {
		w.l.Log(ctx, level, msg)
	}
	return len(p), nil
}

// parseLogLine splits a memberlist log line into a slog level and message.
func parseLogLine(line string) (slog.Level, string) {
	line = strings.TrimRight(line, "\r\n")
	level := slog.LevelDebug
	if rest, ok := strings.CutPrefix(line, "["); ok {
		if tag, msg, ok := strings.Cut(rest, "]"); ok {
			level = levelOf(tag)
			line = strings.TrimSpace(msg)
		}
	}
	line = strings.TrimPrefix(line, "memberlist: ")
	return level, line
}

func levelOf(tag string) slog.Level {
	switch tag {
	case "WARN", "ERR", "ERROR":
		return slog.LevelWarn
	default:
		return slog.LevelDebug
	}
}
