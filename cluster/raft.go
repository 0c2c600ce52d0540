package cluster

import (
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/hashicorp/go-hclog"
	"github.com/hashicorp/raft"
	raftboltdb "github.com/hashicorp/raft-boltdb/v2"
)

// RaftConfig configures one server's raft.
type RaftConfig struct {
	// NodeID is this server's raft ID (stable across restarts).
	NodeID string
	// DataDir holds raft/raft.db (log and stable store) and
	// raft/snapshots. Empty keeps everything in memory (tests).
	DataDir string
	// BindAddr is host:port for the TCP transport; empty selects the
	// in-memory transport (dev mode: a single server in one process).
	BindAddr string
	// Advertise is the host:port other servers dial; empty = BindAddr.
	Advertise string
	// Bootstrap makes a single-server cluster of this server when there is
	// no existing raft state. Harmless on restart.
	Bootstrap bool
	// Snapshot and log retention; zero = raft's defaults.
	SnapshotThreshold uint64
	SnapshotInterval  time.Duration
	TrailingLogs      uint64
	// Timeouts; zero = raft's defaults (1 s / 1 s / 500 ms), or short ones
	// (100 ms) with the in-memory transport.
	HeartbeatTimeout, ElectionTimeout, LeaderLeaseTimeout time.Duration
	// Logger receives raft's logs (its info level demoted to debug). Nil
	// discards them.
	Logger *slog.Logger
	// TLS, when set, puts mutual TLS on the TCP transport.
	TLS *RaftTLS
}

// devTimeout is the default timeout with the in-memory transport.
const devTimeout = 100 * time.Millisecond

// logCacheSize is how many recent log entries stay in memory for
// replication; plan entries can be hundreds of KB each, so it is small.
const logCacheSize = 64

// snapshotsRetained is how many snapshots the file store keeps.
const snapshotsRetained = 2

// Raft is a running raft server whose state machine is the FSM given to
// NewRaft. It is safe for concurrent use.
type Raft struct {
	raft   *raft.Raft
	trans  raft.Transport
	bolt   *raftboltdb.BoltStore // nil when in memory
	logger *slog.Logger

	// lostContact is raft's last contact (unix nanos, 0 for none) when
	// it last forgot the leader (noteLeader).
	lostContact atomic.Int64

	shutdownOnce sync.Once
	shutdownErr  error
}

// stores are the raft storage backends.
type stores struct {
	logs   raft.LogStore
	stable raft.StableStore
	snaps  raft.SnapshotStore
	bolt   *raftboltdb.BoltStore
}

// NewRaft starts raft over fsm. With an existing DataDir, raft restores
// the latest snapshot and replays the log after it into fsm before it
// takes part in the cluster.
func NewRaft(cfg RaftConfig, fsm raft.FSM) (*Raft, error) {
	if cfg.NodeID == "" {
		return nil, fmt.Errorf("%w: NodeID is required", ErrConfig)
	}
	logger := cfg.Logger
	if logger == nil {
		logger = slog.New(slog.DiscardHandler)
	}
	hlog := newHclogAdapter(logger, "raft")
	conf, err := raftConfig(cfg, hlog)
	if err != nil {
		return nil, err
	}
	st, err := openStores(cfg.DataDir, hlog)
	if err != nil {
		return nil, err
	}
	trans, err := newTransport(cfg, hlog)
	if err != nil {
		return nil, errors.Join(err, closeStores(st))
	}
	r := &Raft{trans: trans, bolt: st.bolt, logger: logger}
	if cfg.Bootstrap {
		if err := bootstrap(conf, st, trans); err != nil {
			return nil, errors.Join(err, closeTransport(trans), closeStores(st))
		}
	}
	r.raft, err = raft.NewRaft(conf, fsm, st.logs, st.stable, st.snaps, trans)
	if err != nil {
		return nil, errors.Join(fmt.Errorf("cluster: start raft: %w", err), closeTransport(trans), closeStores(st))
	}
	r.raft.RegisterObserver(raft.NewObserver(nil, false, r.noteLeader))
	return r, nil
}

func raftConfig(cfg RaftConfig, hlog hclog.Logger) (*raft.Config, error) {
	conf := raft.DefaultConfig()
	conf.LocalID = raft.ServerID(cfg.NodeID)
	conf.Logger = hlog
	if cfg.BindAddr == "" {
		conf.HeartbeatTimeout, conf.ElectionTimeout, conf.LeaderLeaseTimeout = devTimeout, devTimeout, devTimeout
		conf.CommitTimeout = 5 * time.Millisecond
	}
	setIf(&conf.HeartbeatTimeout, cfg.HeartbeatTimeout)
	setIf(&conf.ElectionTimeout, cfg.ElectionTimeout)
	setIf(&conf.LeaderLeaseTimeout, cfg.LeaderLeaseTimeout)
	conf.LeaderLeaseTimeout = min(conf.LeaderLeaseTimeout, conf.HeartbeatTimeout)
	setIf(&conf.SnapshotThreshold, cfg.SnapshotThreshold)
	setIf(&conf.SnapshotInterval, cfg.SnapshotInterval)
	setIf(&conf.TrailingLogs, cfg.TrailingLogs)
	if err := raft.ValidateConfig(conf); err != nil {
		return nil, fmt.Errorf("%w: %w", ErrConfig, err)
	}
	return conf, nil
}

func setIf[T comparable](dst *T, v T) {
	var zero T
	if v != zero {
		*dst = v
	}
}

func openStores(dataDir string, hlog hclog.Logger) (stores, error) {
	if dataDir == "" {
		mem := raft.NewInmemStore()
		return stores{logs: mem, stable: mem, snaps: raft.NewInmemSnapshotStore()}, nil
	}
	dir := filepath.Join(dataDir, "raft")
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return stores{}, fmt.Errorf("cluster: raft data dir: %w", err)
	}
	bolt, err := raftboltdb.NewBoltStore(filepath.Join(dir, "raft.db"))
	if err != nil {
		return stores{}, fmt.Errorf("cluster: open raft.db: %w", err)
	}
	snaps, err := raft.NewFileSnapshotStoreWithLogger(dir, snapshotsRetained, hlog)
	if err != nil {
		return stores{}, errors.Join(fmt.Errorf("cluster: snapshot store: %w", err), bolt.Close())
	}
	logs, err := raft.NewLogCache(logCacheSize, bolt)
	if err != nil {
		return stores{}, errors.Join(err, bolt.Close())
	}
	return stores{logs: logs, stable: bolt, snaps: snaps, bolt: bolt}, nil
}

func closeStores(st stores) error {
	if st.bolt == nil {
		return nil
	}
	return st.bolt.Close()
}

// inmemPrefix starts the address of a raft transport in memory (no
// BindAddr: dev mode and tests).
const inmemPrefix = "inmem:"

// IsInmemAddr says whether a raft address is of a transport in memory,
// which has no network address to show.
func IsInmemAddr(addr string) bool { return strings.HasPrefix(addr, inmemPrefix) }

func newTransport(cfg RaftConfig, hlog hclog.Logger) (raft.Transport, error) {
	if cfg.BindAddr == "" {
		// A stable address, so a restart matches the stored configuration.
		_, trans := raft.NewInmemTransport(raft.ServerAddress(inmemPrefix + cfg.NodeID))
		return trans, nil
	}
	var adv net.Addr
	if cfg.Advertise != "" {
		a, err := net.ResolveTCPAddr("tcp", cfg.Advertise)
		if err != nil {
			return nil, fmt.Errorf("%w: advertise %q: %w", ErrConfig, cfg.Advertise, err)
		}
		adv = a
	}
	if cfg.TLS != nil {
		layer, err := newTLSStreamLayer(cfg.BindAddr, adv, cfg.TLS)
		if err != nil {
			return nil, err
		}
		return raft.NewNetworkTransportWithLogger(layer, 3, 10*time.Second, hlog), nil
	}
	trans, err := raft.NewTCPTransportWithLogger(cfg.BindAddr, adv, 3, 10*time.Second, hlog)
	if err != nil {
		return nil, fmt.Errorf("cluster: raft transport on %s: %w", cfg.BindAddr, err)
	}
	return trans, nil
}

func closeTransport(t raft.Transport) error {
	if nt, ok := t.(*raft.NetworkTransport); ok {
		nt.CloseStreams() // release pooled connections so peers' handlers end
	}
	if c, ok := t.(io.Closer); ok {
		return c.Close()
	}
	return nil
}

// bootstrap makes a one-server configuration when there is no state yet.
func bootstrap(conf *raft.Config, st stores, trans raft.Transport) error {
	has, err := raft.HasExistingState(st.logs, st.stable, st.snaps)
	if err != nil {
		return fmt.Errorf("cluster: read raft state: %w", err)
	}
	if has {
		return nil
	}
	servers := raft.Configuration{Servers: []raft.Server{{
		ID: conf.LocalID, Address: trans.LocalAddr(), Suffrage: raft.Voter,
	}}}
	if err := raft.BootstrapCluster(conf, st.logs, st.stable, st.snaps, trans, servers); err != nil {
		return fmt.Errorf("cluster: bootstrap raft: %w", err)
	}
	return nil
}

// Shutdown stops raft and closes its transport and stores. It is safe to
// call more than once.
func (r *Raft) Shutdown() error {
	r.shutdownOnce.Do(func() {
		err := r.raft.Shutdown().Error()
		r.shutdownErr = errors.Join(err, closeTransport(r.trans), closeStores(stores{bolt: r.bolt}))
	})
	return r.shutdownErr
}
