package remote

import (
	"bytes"
	"log/slog"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/troupe-dev/troupe/messages"
)

func TestAdvertise(t *testing.T) {
	tests := []struct {
		name, adv, bindHost string
		want                string
		wantErr             error
	}{
		{"bind host", "", "127.0.0.1", "127.0.0.1:4000", nil},
		{"full address kept", "10.0.0.2:4647", "0.0.0.0", "10.0.0.2:4647", nil},
		{"bare host gets the bound port", "10.0.0.2", "0.0.0.0", "10.0.0.2:4000", nil},
		{"port 0 gets the bound port", "node1.example:0", "0.0.0.0", "node1.example:4000", nil},
		{"bare IPv6", "fd00::2", "::", "[fd00::2]:4000", nil},
		{"unspecified advertise", "0.0.0.0", "127.0.0.1", "", ErrInvalidConfig},
		{"garbage", "a b", "127.0.0.1", "", ErrInvalidConfig},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := advertise(tc.adv, tc.bindHost, 4000)
			if tc.wantErr != nil {
				require.ErrorIs(t, err, tc.wantErr)
				return
			}
			require.NoError(t, err)
			require.Equal(t, tc.want, got)
		})
	}
}

func TestAliases(t *testing.T) {
	got := aliases(addrs{bindHost: "127.0.0.1", bindPort: 4647, advertise: "127.0.0.1:4647"})
	require.ElementsMatch(t, []string{"localhost:4647", "[::1]:4647"}, got)

	got = aliases(addrs{bindHost: "10.0.0.2", bindPort: 4647, advertise: "node1:4647"})
	require.Equal(t, []string{"10.0.0.2:4647"}, got)
}

func TestQuietLogger(t *testing.T) {
	var buf bytes.Buffer
	log := slog.New(slog.NewTextHandler(&buf, &slog.HandlerOptions{Level: slog.LevelInfo}))
	q := LoggerFactory(log)(nil)
	q.Info("Started EndpointManager")
	require.Empty(t, buf.String(), "protoactor info is debug")
	q.Warn("EndpointReader received unknown message type")
	require.Contains(t, buf.String(), "level=WARN")
	require.Contains(t, buf.String(), "component=protoactor")
}

func TestReplyError(t *testing.T) {
	e := &messages.Error{Code: CodeNotLeader, Message: "x", LeaderRPCAddr: "10.0.0.1:4647"}
	tests := []struct {
		name  string
		reply any
		want  *RemoteError
	}{
		{"error message", e, &RemoteError{Addr: "a:1", Actor: "s", Code: CodeNotLeader, Message: "x", LeaderRPCAddr: "10.0.0.1:4647"}},
		{"error field", &messages.NodeHeartbeatResponse{Error: e}, &RemoteError{Addr: "a:1", Actor: "s", Code: CodeNotLeader, Message: "x", LeaderRPCAddr: "10.0.0.1:4647"}},
		{"no error field set", &messages.UpdateAllocsResponse{Index: 3}, nil},
		{"typed nil", (*messages.RegisterNodeResponse)(nil), nil},
		{"no error field at all", &messages.ActorTreeResponse{}, nil},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			require.Equal(t, tc.want, ReplyError(tc.reply, "a:1", "s"))
		})
	}
	require.Equal(t, "remote: a:1/s replied not_leader: x (leader at 10.0.0.1:4647)", ReplyError(e, "a:1", "s").Error())
}
