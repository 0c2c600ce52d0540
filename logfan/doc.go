// Package logfan fans the agent's log out to monitors (GET
// /v1/agent/monitor) as it is written. Hub.Wrap puts a slog.Handler in
// front of the agent's own: records still reach it as before, and each
// subscriber gets the records at or above its level rendered as text or
// JSON lines.
//
//	hub := logfan.NewHub()
//	logger := slog.New(hub.Wrap(inner))
//	sub := hub.Subscribe(slog.LevelDebug, false)
//	defer sub.Close()
//	for line := range sub.Lines() { ... } // sub.Dropped() says how many were lost
//
// Logging never waits for a monitor: a subscriber's buffer is bounded,
// and a line that does not fit is dropped and counted. With no
// subscriber, a record costs one atomic load more than before.
package logfan
