package agent

import (
	"context"
	"errors"
	"fmt"
	"github.com/troupe-dev/troupe/cluster/tlsutil"
	"log/slog"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/asynkron/protoactor-go/actor"
	"github.com/hashicorp/go-uuid"

	"github.com/troupe-dev/troupe/actors"
	"github.com/troupe-dev/troupe/actors/alloc"
	"github.com/troupe-dev/troupe/actors/node"
	"github.com/troupe-dev/troupe/actors/scheduler"
	"github.com/troupe-dev/troupe/actors/server"
	"github.com/troupe-dev/troupe/cluster"
	"github.com/troupe-dev/troupe/cluster/membership"
	"github.com/troupe-dev/troupe/cluster/remote"
	"github.com/troupe-dev/troupe/cluster/state"
	"github.com/troupe-dev/troupe/httpapi"
	"github.com/troupe-dev/troupe/logfan"
	"github.com/troupe-dev/troupe/messages"
	"github.com/troupe-dev/troupe/runtime/clientstate"
	"github.com/troupe-dev/troupe/runtime/cni"
	"github.com/troupe-dev/troupe/runtime/device"
	"github.com/troupe-dev/troupe/runtime/driver"
	"github.com/troupe-dev/troupe/runtime/driver/containerd"
	"github.com/troupe-dev/troupe/telemetry"
)

// Agent is one running troupe agent.
type Agent struct {
	cfg     *Config
	log     *slog.Logger
	dataDir string
	clock   actors.Clock
	// hostCPU samples the host's cores for /v1/client/stats (clients).
	hostCPU *cpuSampler
	started time.Time

	store  *state.Store
	fsm    *state.FSM
	raft   *cluster.Raft
	raftID string
	// readyTerm is the raft term in which this server, leading, finished
	// its barrier (0: none): see readyLeader.
	readyTerm atomic.Uint64

	sys       *actors.System
	serverPID *actor.PID
	clientPID *actor.PID
	// local is this agent's own client as the server's actors see it,
	// fixed before they start (identifyClient); empty without a client.
	local server.Clients
	// nodeSecret is the client's node SecretID, kept beside the node ID
	// in the data dir (identifyClient): the client shows it with every
	// call it makes for its node, and never to anyone else.
	nodeSecret string
	transport  *remote.Transport
	// conn reaches the servers (the leader follows redirects): the
	// client's calls and volume requests use it.
	conn    *serverConn
	members *membership.Membership
	// wan is a server's member of the WAN pool of every region's servers
	// (wan.go); nil on clients and unclustered servers.
	wan *membership.Membership
	// wanAddr is this server's WAN pool address, read once at start (floodWAN).
	wanAddr string

	db      *clientstate.DB
	plugins *node.PluginTable
	ctrd    *containerd.Driver
	network *cni.Network
	devices *device.Manager
	csi     *alloc.CSIConfig
	drivers map[string]driver.Driver
	node    *messages.Node

	ln   net.Listener
	http *http.Server
	// api is the HTTP API's handler, set once it serves: the RPC guard
	// resolves tokens through it.
	api atomic.Pointer[httpapi.Server]
	tls *tlsutil.Loader // nil: TLS is off

	stop chan struct{}
	wg   sync.WaitGroup

	tele *telemetry.Telemetry // metrics (telemetry.go)
	// schedStats is the leader's scheduler queue, for the metrics.
	schedStats scheduler.Stats
	logs       *logfan.Hub // the log's monitors
}

// New builds an agent from cfg; Start runs it.
func New(cfg *Config) (*Agent, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	a := &Agent{cfg: cfg, log: cfg.Logger, clock: actors.RealClock{}, stop: make(chan struct{})}
	if a.log == nil {
		a.log = slog.New(slog.DiscardHandler)
	}
	a.logs = logfan.NewHub() // GET /v1/agent/monitor sees every line the agent logs
	a.log = slog.New(a.logs.Wrap(a.log.Handler()))
	a.dataDir = cfg.DataDir
	if cfg.VolumeRetry.Initial <= 0 {
		cfg.VolumeRetry = actors.DefaultRetry()
	}
	if cfg.Dev && a.dataDir == "" {
		dir, err := os.MkdirTemp("", "troupe-dev-")
		if err != nil {
			return nil, fmt.Errorf("agent: temp data dir: %w", err)
		}
		a.dataDir = dir
	}
	if err := a.setupTLS(); err != nil {
		return nil, err
	}
	for _, d := range []string{"server", "client", "alloc"} {
		if err := os.MkdirAll(filepath.Join(a.dataDir, d), 0o755); err != nil {
			return nil, fmt.Errorf("agent: data dir: %w", err)
		}
	}
	return a, nil
}

// DataDir is where the agent keeps its state.
func (a *Agent) DataDir() string { return a.dataDir }

// AllocDir is the root of the allocation directories.
func (a *Agent) AllocDir() string { return filepath.Join(a.dataDir, "alloc") }

// Start brings up raft, the actors and the HTTP API.
func (a *Agent) Start() error {
	if err := a.boot(); err != nil {
		return err
	}
	for _, step := range a.startSteps() {
		if err := step.run(); err != nil {
			a.Shutdown()
			return err
		}
	}
	return nil
}

// boot creates the actor system and the agent actor.
func (a *Agent) boot() error {
	a.started = time.Now()
	if a.cfg.ACLEnabled && a.cfg.Clustered() && !a.cfg.TLS.RPC {
		// As in Nomad: ACL tokens guard the API and users' RPC messages,
		// but only certificates tell a server from a stranger.
		a.log.Warn("ACLs are on but the RPC and raft links are plain: any host that reaches them is trusted as a server; set tls { rpc = true } (with verify_server_hostname) to close them")
	}
	a.conn = newServerConn(a)
	a.sys = actors.NewSystem(remote.QuietLogger(a.log))
	if _, err := a.sys.Root.SpawnNamed(a.sys.Props("agent", func() actor.Actor { return &agentActor{a: a} }), "agent"); err != nil {
		return fmt.Errorf("agent: spawn agent actor: %w", err)
	}
	return nil
}

// startStep is one step of Start, named for tests that stop between steps.
type startStep struct {
	name string
	run  func() error
}

// startSteps lists what Start brings up, in order. The local client's
// identity comes first: the server's actors read it from their first
// message on, so it is fixed before they start and never written again.
// Raft comes before the transport: the transport delivers requests that
// need it.
func (a *Agent) startSteps() []startStep {
	steps := []startStep{{"http-listen", a.listenHTTP}}
	if a.cfg.Client {
		steps = append(steps, startStep{"client-identity", a.identifyClient})
	}
	if a.cfg.Server {
		steps = append(steps, startStep{"server", a.startServer})
	}
	if a.cfg.Clustered() {
		steps = append(steps, startStep{"remote", a.startRemote})
	}
	if a.cfg.Clustered() && a.cfg.Server {
		steps = append(steps, startStep{"federation", a.startFederation}) // federation.go
	}
	if a.cfg.Client {
		steps = append(steps, startStep{"client", a.startClient})
	}
	steps = append(steps, startStep{"http", a.startHTTP})
	if a.cfg.Clustered() {
		steps = append(steps, startStep{"membership", a.startMembership})
	}
	return steps
}

// Apply proposes a raft command: through this server when it leads, else
// forwarded to the leader over the actor transport. With no leader yet
// it waits for one, at most the hold timeout (leadership.go).
func (a *Agent) Apply(ctx context.Context, cmd *messages.Command) (any, uint64, error) {
	if cmd.Time == 0 {
		cmd.Time = a.clock.Now().UnixNano()
	}
	if a.raft == nil {
		return nil, 0, ErrNotServer
	}
	return a.applyPatiently(ctx, cmd)
}

// Store is the local replica of the state.
func (a *Agent) Store() *state.Store { return a.store }

// Raft is the agent's raft server.
func (a *Agent) Raft() *cluster.Raft { return a.raft }

// System is the agent's actor system.
func (a *Agent) System() *actors.System { return a.sys }

// Node is the client's node, nil on a server-only agent.
func (a *Agent) Node() *messages.Node { return a.node }

// WaitLeader waits until this server leads (single-server agents elect
// themselves within a second or two) and its state store holds every
// entry committed before: a restarted server's store has only its last
// raft snapshot until then.
func (a *Agent) WaitLeader(ctx context.Context) error {
	if a.raft == nil {
		return ErrNotServer
	}
	t := time.NewTicker(20 * time.Millisecond)
	defer t.Stop()
	for {
		if a.raft.IsLeader() {
			timeout := time.Minute
			if d, ok := ctx.Deadline(); ok {
				if timeout = time.Until(d); timeout <= 0 { // raft reads 0 as "no timeout"
					return fmt.Errorf("agent: no leader: %w", context.DeadlineExceeded)
				}
			}
			// Barrier's timeout bounds only the queueing; the apply itself
			// is waited for here, with ctx.
			done := make(chan error, 1)
			go func() { done <- a.raft.Barrier(timeout) }()
			select {
			case err := <-done:
				if err == nil {
					return nil
				}
				a.log.Debug("raft barrier failed while waiting to lead", "error", err)
			case <-ctx.Done():
				return fmt.Errorf("agent: no leader: %w", ctx.Err())
			}
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("agent: no leader: %w", ctx.Err())
		case <-t.C:
		}
	}
}

// Shutdown stops the agent. Tasks keep running: a restarted agent with the
// same data dir re-attaches to them. A -dev agent, whose state dies with
// it, stops its tasks first.
func (a *Agent) Shutdown() error {
	select {
	case <-a.stop:
		return nil
	default:
	}
	close(a.stop)
	a.stopTelemetry()
	var errs []error
	if a.http != nil {
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		errs = append(errs, a.http.Shutdown(ctx))
		cancel()
	} else if a.ln != nil {
		errs = append(errs, a.ln.Close())
	}
	// Stop the actors first (children before parents; task actors stop
	// without killing their tasks), so nothing restarts a task or writes
	// state while the rest shuts down.
	if a.sys != nil {
		for _, pid := range []*actor.PID{a.clientPID, a.serverPID} {
			if pid != nil {
				_ = a.sys.Root.StopFuture(pid).Wait()
			}
		}
	}
	if (a.cfg.Dev || a.cfg.StopTasksOnShutdown) && a.db != nil {
		a.stopAllTasks()
		if a.network != nil { // the state dies with the agent: so do its networks
			ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
			errs = append(errs, a.network.GC(ctx, func(string) bool { return false }))
			cancel()
		}
	}
	for _, d := range a.drivers {
		if s, ok := d.(interface{ Shutdown() }); ok {
			s.Shutdown()
		}
	}
	if a.devices != nil { // after the client actor cancelled its device watch; Close waits for it
		errs = append(errs, a.devices.Close())
	}
	if a.wan != nil {
		_ = a.wan.Leave(time.Second)
		errs = append(errs, a.wan.Shutdown())
	}
	if a.members != nil {
		_ = a.members.Leave(time.Second)
		errs = append(errs, a.members.Shutdown())
	}
	if a.transport != nil {
		a.transport.Shutdown(true)
	}
	if a.sys != nil {
		a.sys.Shutdown()
	}
	if a.raft != nil {
		errs = append(errs, a.raft.Shutdown())
	}
	a.wg.Wait()
	if a.db != nil {
		errs = append(errs, a.db.Close())
	}
	if a.cfg.Dev && a.cfg.DataDir == "" {
		errs = append(errs, os.RemoveAll(a.dataDir))
	}
	return errors.Join(errs...)
}

func hostname() string {
	h, _ := os.Hostname()
	return h
}

// persistentID reads an ID from path, creating it on first use.
func persistentID(path string) (string, error) {
	if b, err := os.ReadFile(path); err == nil && len(strings.TrimSpace(string(b))) > 0 {
		return strings.TrimSpace(string(b)), nil
	}
	id, err := uuid.GenerateUUID()
	if err != nil {
		return "", err
	}
	if err := os.WriteFile(path, []byte(id+"\n"), 0o600); err != nil {
		return "", fmt.Errorf("agent: write %s: %w", path, err)
	}
	return id, nil
}
