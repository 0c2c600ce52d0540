package clustertest

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"net/netip"
	"os"
	"sync"
	"testing"
)

// Cluster is a set of hosts (network namespaces) on one private bridge.
type Cluster struct {
	t       testing.TB
	id      string
	subnet  netip.Prefix
	gateway netip.Addr
	logDir  string
	hosts   []*Host
	lock    *runLock
	fence   *fence

	mu     sync.Mutex
	procs  []*Proc
	logs   map[string]bool // log file names taken
	closed bool
}

// Option configures New.
type Option func(*config)

type config struct {
	logDir string
}

// WithLogDir keeps process logs in dir (created if missing) instead of a
// t.TempDir that is removed after the test.
func WithLogDir(dir string) Option { return func(c *config) { c.logDir = dir } }

// New builds a cluster of n hosts and registers a t.Cleanup that tears it
// down. It skips the test when the harness cannot run (see RequireRoot) and
// fails it when setup fails. Leftovers of crashed earlier runs are removed
// first (see CleanupStale).
func New(t testing.TB, n int, opts ...Option) *Cluster {
	t.Helper()
	RequireRoot(t)
	cfg := config{}
	for _, o := range opts {
		o(&cfg)
	}
	if cfg.logDir == "" {
		cfg.logDir = t.TempDir()
	} else if err := os.MkdirAll(cfg.logDir, 0o755); err != nil {
		t.Fatalf("clustertest: log dir: %v", err)
	}
	c, err := newCluster(t, n, cfg.logDir)
	if c != nil {
		t.Cleanup(c.cleanup)
	}
	if err != nil {
		t.Fatalf("clustertest: setup: %v", err)
	}
	return c
}

// newCluster claims a run id and subnet and builds the network. A non-nil
// cluster is returned whenever something was created, even with an error,
// so that the caller can tear it down.
func newCluster(t testing.TB, n int, logDir string) (*Cluster, error) {
	if n < 1 || n > MaxHosts {
		return nil, fmt.Errorf("%w: %d, want 1..%d", ErrBadSize, n, MaxHosts)
	}
	ctx := context.Background()
	var c *Cluster
	err := withSetupLock(func() error {
		removed, err := removeStale(ctx)
		if len(removed) > 0 {
			t.Logf("clustertest: removed leftovers of crashed runs: %v", removed)
		}
		if err != nil { // leftovers do not block a new run: its names and subnet are fresh
			t.Logf("clustertest: warning: removing leftovers: %v", err)
		}
		if c, err = claimRun(t, logDir); err != nil {
			return err
		}
		return c.addBridge(ctx)
	})
	if err != nil || c == nil {
		return c, err
	}
	for i := range n {
		if err := c.addHost(ctx, i); err != nil {
			return c, err
		}
	}
	t.Logf("clustertest: run %s, subnet %s, hosts%s, logs in %s", c.id, c.subnet, c.hostList(), logDir)
	return c, nil
}

// claimRun picks an unused run id, locks it and picks a free subnet.
func claimRun(t testing.TB, logDir string) (*Cluster, error) {
	used, err := usedPrefixes(context.Background())
	if err != nil {
		return nil, err
	}
	subnet, err := pickSubnet(used, rand.IntN(256))
	if err != nil {
		return nil, err
	}
	for range 16 {
		id, err := newRunID()
		if err != nil {
			return nil, err
		}
		lock, err := acquireRun(id)
		if errors.Is(err, os.ErrExist) {
			continue
		}
		if err != nil {
			return nil, err
		}
		return &Cluster{
			t: t, id: id, subnet: subnet, gateway: nthAddr(subnet, 1),
			logDir: logDir, lock: lock, fence: newFence(id), logs: map[string]bool{},
		}, nil
	}
	return nil, fmt.Errorf("%w: no free run id after 16 tries", ErrCommand)
}

// ID returns the run id, the prefix of every name this cluster created.
func (c *Cluster) ID() string { return c.id }

// Subnet returns the hosts' subnet, e.g. "10.213.7.0/24".
func (c *Cluster) Subnet() string { return c.subnet.String() }

// Gateway returns the bridge's address in the root namespace, through which
// the test process reaches the hosts (hosts have no route beyond the subnet).
func (c *Cluster) Gateway() string { return c.gateway.String() }

// Bridge returns the name of the bridge in the root namespace.
func (c *Cluster) Bridge() string { return bridgeName(c.id) }

// LogDir returns the directory holding the process logs.
func (c *Cluster) LogDir() string { return c.logDir }

// Hosts returns the hosts, in index order.
func (c *Cluster) Hosts() []*Host { return append([]*Host(nil), c.hosts...) }

// Host returns host i.
func (c *Cluster) Host(i int) *Host { return c.hosts[i] }

func (c *Cluster) hostList() string {
	s := ""
	for _, h := range c.hosts {
		s += fmt.Sprintf(" %s=%s(%s)", h.Name, h.Addr, h.NetNS)
	}
	return s
}
