package logfan

import (
	"bytes"
	"log/slog"
	"testing"

	"github.com/stretchr/testify/require"
)

func TestSubscriberGetsLinesAtItsLevelWithAttrs(t *testing.T) {
	var agentLog bytes.Buffer
	hub := NewHub()
	log := slog.New(hub.Wrap(slog.NewTextHandler(&agentLog, &slog.HandlerOptions{Level: slog.LevelInfo}))).With("actor", "alloc")
	log.Info("before")
	sub := hub.Subscribe(slog.LevelDebug, true)
	defer sub.Close()
	log.WithGroup("g").Debug("after", "k", 1)
	line := <-sub.Lines()
	require.Contains(t, string(line), `"msg":"after","actor":"alloc","g":{"k":1}`)
	require.NotContains(t, agentLog.String(), "after", "the agent's own level still holds")
	require.Contains(t, agentLog.String(), "before")
	require.Empty(t, sub.Lines())
}

func TestSlowSubscriberDropsNeverBlocks(t *testing.T) {
	hub := NewHub()
	log := slog.New(hub.Wrap(slog.DiscardHandler))
	sub := hub.Subscribe(slog.LevelInfo, false)
	for range DefaultBuffer + 10 {
		log.Info("x")
	}
	log.Debug("below the level")
	require.Equal(t, uint64(10), sub.Dropped())
	require.Len(t, sub.Lines(), DefaultBuffer)
	sub.Close()
	require.False(t, slog.New(hub.Wrap(slog.DiscardHandler)).Enabled(t.Context(), slog.LevelError))
}
