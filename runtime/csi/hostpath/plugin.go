package hostpath

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	csipb "github.com/container-storage-interface/spec/lib/go/csi"
	"google.golang.org/grpc"
)

// DefaultName is the plugin name GetPluginInfo reports.
const DefaultName = "hostpath.troupe.dev"

// Mode says which CSI services a plugin instance serves.
type Mode string

// Modes. Identity is served in every mode.
const (
	ModeMonolith   Mode = "monolith"   // controller and node
	ModeController Mode = "controller" // controller only
	ModeNode       Mode = "node"       // node only
)

// Config configures a Plugin.
type Config struct {
	// Root holds the volumes, one directory each, plus the plugin's
	// metadata under Root/.meta. Required.
	Root string
	// NodeID is what NodeGetInfo reports. Required unless Mode is
	// controller.
	NodeID string
	// Mode defaults to ModeMonolith.
	Mode Mode
	// Name and Version default to DefaultName and "0.1.0".
	Name, Version string
	// MaxVolumesPerNode is reported by NodeGetInfo; 0 means no limit.
	MaxVolumesPerNode int64
	// Topology, when set, is this node's accessible topology; the plugin
	// then reports VOLUME_ACCESSIBILITY_CONSTRAINTS.
	Topology map[string]string
	// Nodes, when set, are the only node IDs ControllerPublish accepts;
	// others answer NotFound. Empty accepts every node.
	Nodes []string
	// UnpublishUnknownOK makes ControllerUnpublishVolume of an unknown
	// volume succeed, as the spec recommends (csi-sanity checks it),
	// instead of answering NotFound.
	UnpublishUnknownOK bool
	// Symlinks makes NodePublish always use a symlink, even as root.
	Symlinks bool
	// MaxCalls caps the call records kept for Calls (default 10000).
	MaxCalls int
	// Logger defaults to a discarding logger.
	Logger *slog.Logger
}

// Plugin is a hostpath CSI plugin: Identity, Controller and Node services
// over gRPC on a unix socket, with faults injectable per method.
type Plugin struct {
	cfg    Config
	log    *slog.Logger
	faults *faults

	mu      sync.Mutex                       // guards the fields below and the disk state
	attach  map[string]map[string]attachment // volume -> node
	targets map[string]publication           // target path -> publication

	srvMu   sync.Mutex
	srv     *grpc.Server
	control *controlServer
	done    chan struct{}
}

// publication is one NodePublish target.
type publication struct {
	volumeID string
	readOnly bool
}

// New checks cfg and returns a plugin that is not yet serving. It creates
// Root when missing.
func New(cfg Config) (*Plugin, error) {
	if err := cfg.setDefaults(); err != nil {
		return nil, err
	}
	for _, dir := range []string{cfg.Root, metaDir(cfg.Root, kindVolume), metaDir(cfg.Root, kindSnapshot), snapshotsDir(cfg.Root)} {
		if err := os.MkdirAll(dir, 0o755); err != nil {
			return nil, fmt.Errorf("%w: %w", ErrInvalidConfig, err)
		}
	}
	return &Plugin{
		cfg:     cfg,
		log:     cfg.Logger,
		faults:  newFaults(cfg.MaxCalls),
		attach:  map[string]map[string]attachment{},
		targets: map[string]publication{},
	}, nil
}

func (c *Config) setDefaults() error {
	if c.Mode == "" {
		c.Mode = ModeMonolith
	}
	switch c.Mode {
	case ModeMonolith, ModeController, ModeNode:
	default:
		return fmt.Errorf("%w: mode %q (want monolith, controller or node)", ErrInvalidConfig, c.Mode)
	}
	if c.Root == "" {
		return fmt.Errorf("%w: root is empty", ErrInvalidConfig)
	}
	root, err := filepath.Abs(c.Root)
	if err != nil {
		return fmt.Errorf("%w: root: %w", ErrInvalidConfig, err)
	}
	c.Root = root
	if c.NodeID == "" && c.Mode != ModeController {
		return fmt.Errorf("%w: node ID is empty (required in %s mode)", ErrInvalidConfig, c.Mode)
	}
	if c.Name == "" {
		c.Name = DefaultName
	}
	if c.Version == "" {
		c.Version = "0.1.0"
	}
	if c.MaxCalls <= 0 {
		c.MaxCalls = 10000
	}
	if c.Logger == nil {
		c.Logger = slog.New(slog.NewTextHandler(io.Discard, nil))
	}
	return nil
}

func (p *Plugin) hasController() bool { return p.cfg.Mode != ModeNode }
func (p *Plugin) hasNode() bool       { return p.cfg.Mode != ModeController }

// Start listens on socketPath ("/path/csi.sock" or "unix:///path/csi.sock"),
// replacing a stale socket file, and serves in the background until ctx
// ends or Stop is called.
func (p *Plugin) Start(ctx context.Context, socketPath string) error {
	p.srvMu.Lock()
	defer p.srvMu.Unlock()
	if p.srv != nil {
		return ErrAlreadyStarted
	}
	ln, err := listenUnix(socketPath)
	if err != nil {
		return err
	}
	srv := grpc.NewServer(grpc.UnaryInterceptor(p.faults.intercept))
	csipb.RegisterIdentityServer(srv, &identity{p: p})
	if p.hasController() {
		csipb.RegisterControllerServer(srv, &controller{p: p})
	}
	if p.hasNode() {
		csipb.RegisterNodeServer(srv, &node{p: p})
	}
	p.faults.reopen()
	p.srv, p.done = srv, make(chan struct{})
	served := make(chan struct{})
	go func() {
		defer close(served)
		if err := srv.Serve(ln); err != nil && !errors.Is(err, grpc.ErrServerStopped) {
			p.log.Error("hostpath: serve", "err", err)
		}
	}()
	go p.stopOn(ctx, p.done, served)
	p.log.Info("hostpath: serving", "socket", ln.Addr().String(), "mode", p.cfg.Mode, "node", p.cfg.NodeID)
	return nil
}

// Serve is Start, then waits until ctx ends or Stop is called.
func (p *Plugin) Serve(ctx context.Context, socketPath string) error {
	if err := p.Start(ctx, socketPath); err != nil {
		return err
	}
	p.srvMu.Lock()
	done := p.done
	p.srvMu.Unlock()
	<-done
	return nil
}

// stopOn stops the plugin when ctx ends or the server exits.
func (p *Plugin) stopOn(ctx context.Context, done, served <-chan struct{}) {
	select {
	case <-ctx.Done():
		p.Stop()
	case <-served:
		p.Stop()
	case <-done:
	}
}

// stopGrace bounds how long Stop waits for RPCs in flight.
const stopGrace = 5 * time.Second

// Stop releases hung calls, stops serving (waiting up to 5s for calls in
// flight), closes the control socket and removes the socket file. It is
// safe to call more than once.
func (p *Plugin) Stop() {
	p.srvMu.Lock()
	defer p.srvMu.Unlock()
	if p.control != nil {
		p.control.close()
		p.control = nil
	}
	if p.srv == nil {
		return
	}
	p.faults.stop()
	graceful := make(chan struct{})
	go func() { p.srv.GracefulStop(); close(graceful) }()
	timer := time.NewTimer(stopGrace)
	defer timer.Stop()
	select {
	case <-graceful:
	case <-timer.C:
		p.srv.Stop()
		<-graceful
	}
	close(p.done)
	p.srv = nil
	p.log.Info("hostpath: stopped")
}

// listenUnix listens on a unix socket, removing a stale socket file.
func listenUnix(endpoint string) (net.Listener, error) {
	path := strings.TrimPrefix(strings.TrimPrefix(endpoint, "unix://"), "unix:")
	if path == "" {
		return nil, fmt.Errorf("%w: empty socket path", ErrInvalidConfig)
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return nil, fmt.Errorf("hostpath: socket dir: %w", err)
	}
	if fi, err := os.Lstat(path); err == nil && fi.Mode()&os.ModeSocket != 0 {
		_ = os.Remove(path)
	}
	ln, err := net.Listen("unix", path)
	if err != nil {
		return nil, fmt.Errorf("hostpath: listen %s: %w", path, err)
	}
	return ln, nil
}
