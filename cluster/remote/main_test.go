package remote

import (
	"bufio"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/exec"
	"strings"
	"testing"

	"github.com/asynkron/protoactor-go/actor"
	"go.uber.org/goleak"

	"github.com/troupe-dev/troupe/messages"
)

// The tests talk from this process (a Client, "A") to a peer agent ("B")
// that runs in a child process: the test binary re-executed with
// peerEnv set. protoactor's Remote.Start writes grpc's global logger on
// every call and its endpoint manager writes its connection map without
// a lock, so two transports in one process are flagged by -race; one
// transport per process is clean.
const (
	peerEnv = "TROUPE_REMOTE_TEST_PEER" // set: run as the peer, value is A's address
)

// fixture is shared by every test: A and the peer B.
var fx struct {
	a    *Client
	sink chan *messages.SetClientAllocs // what B forwarded to A's "sink"
	b    string                         // B's advertised address
}

func TestMain(m *testing.M) {
	flag.Parse()
	if addr := os.Getenv(peerEnv); addr != "" {
		os.Exit(runPeer(addr))
	}
	goleak.VerifyTestMain(mainWithPeer{m})
}

// mainWithPeer wraps m.Run with the fixture, so that goleak checks after
// both transports are gone.
type mainWithPeer struct{ m *testing.M }

func (w mainWithPeer) Run() int {
	peer, err := setup()
	if err != nil {
		fmt.Fprintln(os.Stderr, "remote tests: setup:", err)
		return 1
	}
	code := w.m.Run()
	fx.a.Close()
	if err := peer.stop(); err != nil {
		fmt.Fprintln(os.Stderr, "remote tests: peer:", err)
		return 1
	}
	return code
}

func verboseLogger() *slog.Logger {
	if testing.Verbose() {
		return slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelDebug}))
	}
	return slog.New(slog.DiscardHandler)
}

func setup() (*peerProc, error) {
	a, err := NewClientConfig(Config{Logger: verboseLogger(), ConnectAttempts: 1})
	if err != nil {
		return nil, err
	}
	fx.a = a
	fx.sink = make(chan *messages.SetClientAllocs, 4)
	sink := &echo{got: fx.sink}
	if _, err := a.Root().SpawnNamed(actor.PropsFromProducer(func() actor.Actor { return sink }), "sink"); err != nil {
		return nil, err
	}
	p, err := startPeer(a.Address())
	if err != nil {
		a.Close()
		return nil, err
	}
	fx.b = p.addr
	return p, nil
}

// peerProc is the child process running B.
type peerProc struct {
	cmd    *exec.Cmd
	stdin  io.WriteCloser
	stderr strings.Builder
	addr   string
}

func startPeer(sinkAddr string) (*peerProc, error) {
	args := []string{"-test.run=^$"}
	if testing.Verbose() {
		args = append(args, "-test.v")
	}
	p := &peerProc{cmd: exec.Command(os.Args[0], args...)}
	p.cmd.Env = append(os.Environ(), peerEnv+"="+sinkAddr)
	p.cmd.Stderr = &p.stderr
	var err error
	if p.stdin, err = p.cmd.StdinPipe(); err != nil {
		return nil, err
	}
	out, err := p.cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	if err := p.cmd.Start(); err != nil {
		return nil, err
	}
	line, err := bufio.NewReader(out).ReadString('\n')
	if err != nil {
		_ = p.stop()
		return nil, fmt.Errorf("peer gave no address: %w: %s", err, p.stderr.String())
	}
	p.addr = strings.TrimSpace(line)
	return p, nil
}

// stop closes the peer's stdin (its signal to exit) and checks that it
// exited cleanly: a race found in the peer makes it exit 66.
func (p *peerProc) stop() error {
	p.stdin.Close()
	if err := p.cmd.Wait(); err != nil {
		return fmt.Errorf("%w: %s", err, p.stderr.String())
	}
	return nil
}

// runPeer is B: an agent-like actor system with remoting and echo actors
// named "server" and "client"; SetClientAllocs is forwarded to sinkAddr's
// "sink". It prints its address and runs until stdin closes.
func runPeer(sinkAddr string) int {
	log := verboseLogger()
	sys := actor.NewActorSystemWithConfig(actor.Configure(actor.WithLoggerFactory(LoggerFactory(log))))
	tr, err := Start(sys, Config{Logger: log})
	if err != nil {
		fmt.Fprintln(os.Stderr, "peer:", err)
		return 1
	}
	for _, name := range []string{"server", "client"} {
		props := actor.PropsFromProducer(func() actor.Actor { return &echo{forward: sinkAddr} })
		if _, err := sys.Root.SpawnNamed(props, name); err != nil {
			fmt.Fprintln(os.Stderr, "peer:", err)
			return 1
		}
	}
	fmt.Println(tr.Address())
	_, _ = io.Copy(io.Discard, os.Stdin)
	// Not graceful: protoactor's graceful stop races with its own event
	// handler (see the package comment above).
	tr.Shutdown(false)
	sys.Shutdown()
	return 0
}
