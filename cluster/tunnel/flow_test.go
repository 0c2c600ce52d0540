package tunnel

import (
	"context"
	"io"
	"net"
	"sync/atomic"
	"testing"
	"time"

	"github.com/asynkron/protoactor-go/actor"
	"github.com/stretchr/testify/require"

	"github.com/troupe-dev/troupe/actors"
	"github.com/troupe-dev/troupe/cluster/remote"
	"github.com/troupe-dev/troupe/messages"
)

// pipeFixture is a listener for region "eu" whose every tunnel connects to
// one end of a net.Pipe (unbuffered: a write there returns only once the
// tunnel's copy took it), the other end of which comes out of served.
type pipeFixture struct {
	c      *remote.Client
	served chan net.Conn
}

func newPipeFixture(t *testing.T, opts ...Option) *pipeFixture {
	t.Helper()
	c, err := remote.NewClient("127.0.0.1:0", nil)
	require.NoError(t, err)
	f := &pipeFixture{c: c, served: make(chan net.Conn, 1)}
	dial := func(context.Context) (net.Conn, error) {
		mine, theirs := net.Pipe()
		f.served <- theirs
		return mine, nil
	}
	pid, err := c.Root().SpawnNamed(Listener("eu", dial, nil, opts...), "federation")
	require.NoError(t, err)
	t.Cleanup(func() {
		_ = c.Root().StopFuture(pid).Wait()
		c.Close()
	})
	return f
}

// A reader that does not keep up makes the far writer wait: the reading
// end never queues more than the window, and what the far side's writer
// got rid of stays within the window (plus the listener's copy buffer)
// of what was read.
func TestTunnelSlowReaderBoundsBuffering(t *testing.T) {
	const window = 64 << 10
	const copyBuf = 32 << 10 // io.Copy's buffer in the listener
	f := newPipeFixture(t, WithWindow(window))
	conn, err := Dial(context.Background(), f.c.Root(), f.c.Address(), "federation", "eu", WithWindow(window))
	require.NoError(t, err)
	defer conn.Close()
	server := <-f.served
	defer server.Close()

	const total = 16 * window
	var written atomic.Int64
	wrote := make(chan error, 1)
	go func() {
		chunk := make([]byte, 4<<10)
		for written.Load() < total {
			n, err := server.Write(chunk)
			written.Add(int64(n))
			if err != nil {
				wrote <- err
				return
			}
		}
		wrote <- server.Close()
	}()

	// Nothing read yet: the window fills, and the writer waits.
	require.Eventually(t, func() bool { return conn.in.peak() == window }, 10*time.Second, time.Millisecond)
	require.LessOrEqual(t, written.Load(), int64(window+copyBuf), "the writer got past the window")

	buf := make([]byte, 1<<10)
	var read int64
	for {
		n, err := conn.Read(buf)
		read += int64(n)
		if err == io.EOF {
			break
		}
		require.NoError(t, err)
		require.LessOrEqual(t, written.Load(), read+window+copyBuf, "the writer ran ahead of the reader")
	}
	require.NoError(t, <-wrote)
	require.Equal(t, int64(total), read)
	require.Equal(t, window, conn.in.peak(), "the most bytes ever queued unread")
}

// The same bound the other way: a request whose far reader takes nothing
// makes the dialer's writes wait once the window and the copy buffer are
// full.
func TestTunnelWriterWaitsForCredit(t *testing.T) {
	const window = 64 << 10
	f := newPipeFixture(t, WithWindow(window))
	conn, err := Dial(context.Background(), f.c.Root(), f.c.Address(), "federation", "eu", WithWindow(window))
	require.NoError(t, err)
	server := <-f.served
	defer server.Close()

	var written atomic.Int64
	wrote := make(chan error, 1)
	go func() {
		chunk := make([]byte, 4<<10)
		for range 64 { // 256 KiB, more than the window and the copy buffer
			n, err := conn.Write(chunk)
			written.Add(int64(n))
			if err != nil {
				wrote <- err
				return
			}
		}
		wrote <- conn.CloseWrite()
	}()
	// The writer is stuck on credit (the listener's pipe holds the window,
	// its copy holds 32 KiB in a write nobody reads); Close ends it.
	require.Eventually(t, func() bool { return written.Load() >= window }, 10*time.Second, time.Millisecond)
	require.NoError(t, conn.Close())
	require.ErrorIs(t, <-wrote, net.ErrClosed)
	require.LessOrEqual(t, written.Load(), int64(window+32<<10+4<<10), "the writer got past the window")
}

// void answers OpenTunnel with itself as the listener's end and then
// swallows everything: a peer that stops answering without stopping, as
// a server behind a cut link or killed with SIGKILL looks from here.
type void struct{}

func (void) Receive(ctx actor.Context) {
	if _, ok := ctx.Message().(*messages.OpenTunnel); ok {
		ctx.Respond(&messages.OpenTunnelResponse{Address: ctx.Self().GetAddress(), ID: ctx.Self().GetId()})
	}
}

// waitArmed waits until an end's keepalive timer is set to fire at at.
func waitArmed(t *testing.T, clock *actors.FakeClock, at time.Time, n int) {
	t.Helper()
	require.Eventually(t, func() bool { return clock.TimerAt(at) && clock.Pending() == n }, 10*time.Second, time.Millisecond)
}

// A peer that goes silent ends a blocked read with ErrNoAnswer naming the
// region once the keepalive timeout passed on the tunnel's clock, not
// before.
func TestTunnelDeadPeerEndsAfterKeepalive(t *testing.T) {
	c, err := remote.NewClient("127.0.0.1:0", nil)
	require.NoError(t, err)
	defer c.Close()
	pid, err := c.Root().SpawnNamed(actor.PropsFromProducer(func() actor.Actor { return void{} }), "void")
	require.NoError(t, err)
	defer func() { _ = c.Root().StopFuture(pid).Wait() }()

	t0 := time.Unix(1_700_000_000, 0)
	clock := actors.NewFakeClock(t0)
	conn, err := Dial(context.Background(), c.Root(), c.Address(), "void", "eu",
		WithClock(clock), WithKeepalive(time.Second, 3*time.Second))
	require.NoError(t, err)
	defer conn.Close()
	read := make(chan error, 1)
	go func() { _, err := conn.Read(make([]byte, 10)); read <- err }()

	for i := 1; i <= 2; i++ { // 2 s of silence: pinged, not broken
		waitArmed(t, clock, t0.Add(time.Duration(i)*time.Second), 1)
		clock.Advance(time.Second)
	}
	waitArmed(t, clock, t0.Add(3*time.Second), 1) // re-armed: the 2 s tick did not break it
	select {
	case err := <-read:
		t.Fatalf("the read ended before the keepalive timeout: %v", err)
	default:
	}
	clock.Advance(time.Second)
	select {
	case err := <-read:
		require.ErrorIs(t, err, ErrNoAnswer)
		require.ErrorContains(t, err, `no answer from region "eu"`)
	case <-time.After(10 * time.Second):
		t.Fatal("the read did not end at the keepalive timeout")
	}
	_, err = conn.Write([]byte("x"))
	require.ErrorIs(t, err, ErrNoAnswer, "writes fail too")
}

// Pings keep an idle tunnel whose peer answers open far past the timeout.
func TestTunnelKeepaliveKeepsIdleTunnel(t *testing.T) {
	t0 := time.Unix(1_700_000_000, 0)
	clock := actors.NewFakeClock(t0)
	f := newPipeFixture(t, WithClock(clock), WithKeepalive(time.Second, 3*time.Second))
	conn, err := Dial(context.Background(), f.c.Root(), f.c.Address(), "federation", "eu",
		WithClock(clock), WithKeepalive(time.Second, 3*time.Second))
	require.NoError(t, err)
	defer conn.Close()
	server := <-f.served
	defer server.Close()
	// Each end pings before it re-arms, so once both re-armed both pings
	// are in the other's mailbox, ahead of the next tick.
	for i := 1; i <= 10; i++ {
		waitArmed(t, clock, t0.Add(time.Duration(i)*time.Second), 2)
		clock.Advance(time.Second)
	}
	waitArmed(t, clock, t0.Add(11*time.Second), 2)
	go func() { _, _ = server.Write([]byte("still here")) }()
	buf := make([]byte, 32)
	n, err := conn.Read(buf)
	require.NoError(t, err)
	require.Equal(t, "still here", string(buf[:n]))
}
