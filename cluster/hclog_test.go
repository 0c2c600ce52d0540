package cluster

import (
	"bytes"
	"log/slog"
	"strings"
	"testing"

	"github.com/hashicorp/go-hclog"
	"github.com/stretchr/testify/require"
)

func TestHclogAdapterLevels(t *testing.T) {
	tests := []struct {
		name     string
		minLevel slog.Level
		log      func(l hclog.Logger)
		want     string // "" = nothing printed
	}{
		{"info is demoted below the default level", slog.LevelInfo, func(l hclog.Logger) { l.Info("entering follower state") }, ""},
		{"info shows at debug", slog.LevelDebug, func(l hclog.Logger) { l.Info("entering follower state") }, "level=DEBUG msg=\"entering follower state\""},
		{"warn stays warn", slog.LevelInfo, func(l hclog.Logger) { l.Warn("slow", "peer", "s2") }, "level=WARN msg=slow logger=raft peer=s2"},
		{"error stays error", slog.LevelInfo, func(l hclog.Logger) { l.Error("failed") }, "level=ERROR msg=failed"},
		{"first election is routine", slog.LevelInfo, func(l hclog.Logger) {
			l.Warn(firstElection, "last-leader-addr", "", "last-leader-id", "")
		}, ""},
		{"election after a leader is a warning", slog.LevelInfo, func(l hclog.Logger) {
			l.Warn(firstElection, "last-leader-addr", "a", "last-leader-id", "s1")
		}, "level=WARN"},
		{"with and named add context", slog.LevelInfo, func(l hclog.Logger) {
			l.Named("snap").With("k", "v").Warn("x")
		}, "logger=raft.snap k=v"},
		{"standard logger forced level", slog.LevelInfo, func(l hclog.Logger) {
			l.StandardLogger(&hclog.StandardLoggerOptions{ForceLevel: hclog.Error}).Print("boom")
		}, "level=ERROR msg=boom"},
		{"SetLevel filters", slog.LevelDebug, func(l hclog.Logger) {
			l.SetLevel(hclog.Error)
			l.Warn("dropped")
		}, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var buf bytes.Buffer
			l := newHclogAdapter(slog.New(slog.NewTextHandler(&buf, &slog.HandlerOptions{Level: tt.minLevel})), "raft")
			tt.log(l)
			if tt.want == "" {
				require.Empty(t, buf.String())
				return
			}
			require.Contains(t, buf.String(), tt.want)
			require.Equal(t, 1, strings.Count(buf.String(), "\n"))
		})
	}
}

func TestHclogAdapterIsLevel(t *testing.T) {
	l := newHclogAdapter(slog.New(slog.NewTextHandler(&bytes.Buffer{}, &slog.HandlerOptions{Level: slog.LevelWarn})), "raft")
	require.False(t, l.IsInfo())
	require.False(t, l.IsDebug())
	require.True(t, l.IsWarn())
	require.True(t, l.IsError())
	require.Equal(t, "raft", l.Name())
}
