package remote

import (
	"context"
	"net"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"google.golang.org/protobuf/proto"

	"github.com/troupe-dev/troupe/messages"
)

func TestRequestTypedReplies(t *testing.T) {
	ctx := context.Background()
	root := fx.a.Root()
	_, port, err := net.SplitHostPort(fx.b)
	require.NoError(t, err)

	t.Run("actor tree", func(t *testing.T) {
		r, err := Request[*messages.ActorTreeResponse](ctx, root, fx.b, "client", &messages.GetActorTree{})
		require.NoError(t, err)
		require.Equal(t, "b", r.GetNode())
	})
	t.Run("heartbeat", func(t *testing.T) {
		r, err := Request[*messages.NodeHeartbeatResponse](ctx, root, fx.b, "server", &messages.NodeHeartbeat{NodeID: "n1"})
		require.NoError(t, err)
		require.Equal(t, int64(5*time.Second), r.GetHeartbeatTTL())
	})
	t.Run("loopback alias of the advertised address", func(t *testing.T) {
		r, err := Request[*messages.ActorTreeResponse](ctx, root, "localhost:"+port, "server", &messages.GetActorTree{})
		require.NoError(t, err)
		require.Equal(t, "b", r.GetNode())
	})
	t.Run("client untyped", func(t *testing.T) {
		r, err := fx.a.Request(ctx, fx.b, "server", &messages.GetActorTree{})
		require.NoError(t, err)
		tree, ok := r.(*messages.ActorTreeResponse)
		require.True(t, ok, "got %T", r)
		require.Equal(t, "b", tree.GetNode())
	})
}

func TestRequestReplyErrors(t *testing.T) {
	ctx := context.Background()
	root := fx.a.Root()

	t.Run("wrong reply type", func(t *testing.T) {
		_, err := Request[*messages.ActorTreeResponse](ctx, root, fx.b, "server", &messages.NodeHeartbeat{})
		require.ErrorIs(t, err, ErrUnexpectedReply)
		require.ErrorContains(t, err, "*messages.ActorTreeResponse")
		require.ErrorContains(t, err, "*messages.NodeHeartbeatResponse")
		require.ErrorContains(t, err, fx.b+"/server")
	})
	t.Run("error field set", func(t *testing.T) {
		r, err := Request[*messages.RegisterNodeResponse](ctx, root, fx.b, "server", &messages.RegisterNodeRequest{})
		var re *RemoteError
		require.ErrorAs(t, err, &re)
		require.True(t, re.NotLeader())
		require.Equal(t, "10.0.0.9:4647", re.LeaderRPCAddr)
		require.Equal(t, fx.b, re.Addr)
		require.Equal(t, "server", re.Actor)
		require.NotNil(t, r, "the reply comes back with its error")
	})
	t.Run("error message reply", func(t *testing.T) {
		_, err := fx.a.Request(ctx, fx.b, "server", &messages.UpdateAllocsRequest{NodeID: "n9"})
		var re *RemoteError
		require.ErrorAs(t, err, &re)
		require.Equal(t, CodeNotFound, re.Code)
		require.Equal(t, "node n9", re.Message)
	})
}

func TestRequestFailuresAreBounded(t *testing.T) {
	tests := []struct {
		name    string
		addr    string
		actor   string
		timeout time.Duration
		want    error
	}{
		{"unknown actor on a live system", fx.b, "nobody", bound, ErrNoActor},
		{"address nobody listens on", deadAddr(t), "server", bound, ErrUnreachable},
		{"ctx deadline shorter than the connect", deadAddr(t), "server", 200 * time.Millisecond, context.DeadlineExceeded},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), tc.timeout)
			defer cancel()
			start := time.Now()
			_, err := Request[*messages.ActorTreeResponse](ctx, fx.a.Root(), tc.addr, tc.actor, &messages.GetActorTree{})
			require.ErrorIs(t, err, tc.want)
			require.ErrorContains(t, err, tc.addr)
			require.ErrorContains(t, err, tc.actor)
			require.Less(t, time.Since(start), tc.timeout+time.Second)
		})
	}
}

func TestRequestCancel(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	timer := time.AfterFunc(100*time.Millisecond, cancel)
	defer timer.Stop()
	start := time.Now()
	// A dead address keeps the request pending during its connect attempt.
	_, err := Request[*messages.ActorTreeResponse](ctx, fx.a.Root(), deadAddr(t), "server", &messages.GetActorTree{})
	require.ErrorIs(t, err, context.Canceled)
	require.Less(t, time.Since(start), time.Second)
}

func TestSendArrivesIntact(t *testing.T) {
	// A -> B's "client", which forwards it to A's "sink": both directions.
	want := testAllocs()
	require.NoError(t, fx.a.Send(fx.b, "client", want))
	select {
	case got := <-fx.sink:
		require.True(t, proto.Equal(want, got), "got %v", got)
	case <-time.After(bound):
		t.Fatal("SetClientAllocs never came back")
	}
}

func TestInvalidUse(t *testing.T) {
	root := fx.a.Root()
	tests := []struct {
		name  string
		addr  string
		actor string
		msg   proto.Message
	}{
		{"nil message", fx.b, "server", nil},
		{"typed nil message", fx.b, "server", (*messages.GetActorTree)(nil)},
		{"empty address", "", "server", &messages.GetActorTree{}},
		{"empty name", fx.b, "", &messages.GetActorTree{}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Request[*messages.ActorTreeResponse](context.Background(), root, tc.addr, tc.actor, tc.msg)
			require.ErrorIs(t, err, ErrInvalidRequest)
			require.ErrorIs(t, Send(root, tc.addr, tc.actor, tc.msg), ErrInvalidRequest)
		})
	}
	t.Run("expired context", func(t *testing.T) {
		ctx, cancel := context.WithCancel(context.Background())
		cancel()
		_, err := Request[*messages.ActorTreeResponse](ctx, root, fx.b, "server", &messages.GetActorTree{})
		require.ErrorIs(t, err, ErrTimeout)
		require.ErrorIs(t, err, context.Canceled)
	})
}

func TestStartErrors(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	defer l.Close()

	tests := []struct {
		name string
		cfg  Config
		want error
	}{
		{"port in use", Config{BindAddr: l.Addr().String()}, ErrStart},
		{"bad bind", Config{BindAddr: "no-port"}, ErrInvalidConfig},
		{"unspecified advertise", Config{AdvertiseAddr: "0.0.0.0:4647"}, ErrInvalidConfig},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Start(plainSystem(t), tc.cfg)
			require.ErrorIs(t, err, tc.want)
		})
	}
	t.Run("second start", func(t *testing.T) {
		_, err := Start(fx.a.sys, Config{})
		require.ErrorIs(t, err, ErrAlreadyStarted)
	})
	t.Run("client bad bind", func(t *testing.T) {
		_, err := NewClient("not-an-address", nil)
		require.ErrorIs(t, err, ErrInvalidConfig)
	})
	t.Run("request without remoting", func(t *testing.T) {
		_, err := Request[*messages.ActorTreeResponse](context.Background(), plainSystem(t).Root, fx.b, "server", &messages.GetActorTree{})
		require.ErrorIs(t, err, ErrNotStarted)
	})
}
