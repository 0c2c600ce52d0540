package cni

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/netip"
	"os"
	"path/filepath"
	"sync/atomic"
	"time"

	"github.com/containernetworking/cni/libcni"
	"github.com/containernetworking/cni/pkg/invoke"
	"github.com/containernetworking/cni/pkg/utils"
)

// cleanupTimeout bounds the cleanup after a failed ADD.
const cleanupTimeout = time.Minute

// Networker is what the alloc actors need of bridge networking; Network
// is the real one and Fake the in-memory one.
type Networker interface {
	Setup(ctx context.Context, req SetupRequest) (*Result, error)
	Restore(ctx context.Context, allocID string, raw []byte, req SetupRequest) (*Result, error)
	Teardown(ctx context.Context, allocID string, raw []byte, req SetupRequest) error
	GC(ctx context.Context, live func(allocID string) bool) error
}

var _ Networker = (*Network)(nil)

// Network is the bridge network of a client: one netns, veth and address
// per allocation, attached to one host bridge. Its methods are safe to
// call from several goroutines; they run one at a time.
type Network struct {
	cfg    Config
	subnet netip.Prefix
	list   *libcni.NetworkConfigList
	cni    *libcni.CNIConfig
	exec   invoke.Exec
	ipam   ipamStore
	log    *slog.Logger
	turn   chan struct{} // held by the one call running

	delFailures atomic.Int64 // teardowns that needed the forced cleanup
}

// New checks cfg and returns its Network. It creates nothing: the bridge,
// directories and iptables chains appear with the first Setup.
func New(cfg Config) (*Network, error) {
	cfg = cfg.withDefaults()
	subnet, err := cfg.validate()
	if err != nil {
		return nil, err
	}
	list, err := cfg.confList()
	if err != nil {
		return nil, fmt.Errorf("%w: %v", ErrInvalidConfig, err)
	}
	exec := newExec(cfg.Logger)
	return &Network{
		cfg: cfg, subnet: subnet, list: list, exec: exec,
		cni:  libcni.NewCNIConfigWithCacheDir(cfg.PluginDirs, cfg.CacheDir, exec),
		ipam: ipamStore{dir: filepath.Join(cfg.IPAMDataDir, cfg.Name)},
		log:  cfg.Logger.With("network", cfg.Name),
		turn: make(chan struct{}, 1),
	}, nil
}

// NetnsPath is where the allocation's network namespace is (or will be).
func (n *Network) NetnsPath(allocID string) string { return netnsPath(n.cfg.NetnsDir, allocID) }

// Subnet is the network that allocations get addresses from.
func (n *Network) Subnet() netip.Prefix { return n.subnet }

// acquire waits for the network's turn and then for the host's CNI lock
// (Config.LockFile), or for ctx.
func (n *Network) acquire(ctx context.Context) (release func(), err error) {
	select {
	case n.turn <- struct{}{}:
	case <-ctx.Done():
		return nil, ctx.Err()
	}
	unlock, err := lockFile(ctx, n.cfg.LockFile)
	if err != nil {
		<-n.turn
		return nil, err
	}
	return func() { unlock(); <-n.turn }, nil
}

// Setup creates the allocation's netns and attaches it to the bridge with
// CNI ADD. A static host port that is taken fails it with a
// PortInUseError before anything is created; when ADD fails, what it made
// is removed again.
func (n *Network) Setup(ctx context.Context, req SetupRequest) (*Result, error) {
	req, err := req.normalize()
	if err != nil {
		return nil, err
	}
	release, err := n.acquire(ctx)
	if err != nil {
		return nil, err
	}
	defer release()
	return n.setup(ctx, req)
}

// addRetries is how many more times setup runs an ADD that failed on a
// concurrent iptables change.
const addRetries = 2

// setup runs add, and runs it again when a plugin's iptables change
// collided with another process's (iptables-nft: a chain it just made
// looked missing, or the table was busy): add cleaned up after itself.
// Setup and Restore (after a reboot) both come here.
func (n *Network) setup(ctx context.Context, req SetupRequest) (*Result, error) {
	var res *Result
	err := retryIptables(ctx, addRetries, transientIptables, func() (err error) {
		res, err = n.add(ctx, req)
		return err
	}, func(try int, err error) {
		n.log.Debug("CNI ADD hit a concurrent iptables change, retrying", "alloc_id", req.AllocID, "try", try, "error", err)
	})
	return res, err
}

// add creates the netns and runs CNI ADD once; when ADD fails, what it
// made is removed again.
func (n *Network) add(ctx context.Context, req SetupRequest) (*Result, error) {
	if err := n.checkPorts(ctx, req); err != nil {
		return nil, err
	}
	if err := prepareNetnsDir(n.cfg.NetnsDir); err != nil {
		return nil, err
	}
	path := n.NetnsPath(req.AllocID)
	if _, err := os.Lstat(path); err == nil && !netnsExists(path) {
		_ = removeNetns(path) // a plain file left from before a reboot
	}
	if err := createNetns(path); err != nil {
		return nil, err
	}
	res, err := n.cni.AddNetworkList(ctx, n.list, n.runtimeConf(req))
	var out *Result
	if err == nil {
		out, err = newResult(res, path, req)
	} else {
		err = fmt.Errorf("%w: %w", ErrPlugin, err)
		if ctx.Err() != nil { // libcni only says the plugin was killed
			err = fmt.Errorf("%w: %w", ctx.Err(), err)
		}
	}
	if err != nil {
		// Clean up even when ctx is what cut ADD short.
		cctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), cleanupTimeout)
		defer cancel()
		if cerr := n.teardown(cctx, req, nil, true); cerr != nil {
			err = errors.Join(err, cerr)
		}
		return nil, fmt.Errorf("cni: setting up allocation %s: %w", req.AllocID, err)
	}
	n.log.Debug("network set up", "alloc_id", req.AllocID, "ip", out.IP)
	return out, nil
}

// Restore brings back the network of an allocation that the agent had set
// up before it restarted, from the CNI result it persisted (raw). When the
// netns still exists, CNI CHECK verifies it against raw; when the check
// fails it is torn down and set up again, once. When the netns is gone
// (the host rebooted and /var/run was wiped, with host-local's state), it
// is set up afresh and gets a new address. The Result may differ from raw:
// persist its RawResult. Result.Recreated says that the netns is a new
// one: tasks still running in the old one have lost their network.
func (n *Network) Restore(ctx context.Context, allocID string, raw []byte, req SetupRequest) (*Result, error) {
	req.AllocID = allocID
	req, err := req.normalize()
	if err != nil {
		return nil, err
	}
	release, err := n.acquire(ctx)
	if err != nil {
		return nil, err
	}
	defer release()
	path := n.NetnsPath(allocID)
	if netnsExists(path) {
		out, err := n.check(ctx, req, raw)
		if err == nil {
			return out, nil
		}
		n.log.Warn("network check failed, recreating it", "alloc_id", allocID, "error", err)
	} else {
		n.log.Info("network namespace gone, recreating it", "alloc_id", allocID, "netns", path)
	}
	if err := n.teardown(ctx, req, raw, false); err != nil {
		return nil, fmt.Errorf("cni: restoring allocation %s: %w", allocID, err)
	}
	out, err := n.setup(ctx, req)
	if err != nil {
		return nil, err
	}
	out.Recreated = true
	return out, nil
}

// check runs CNI CHECK with raw as prevResult.
func (n *Network) check(ctx context.Context, req SetupRequest, raw []byte) (*Result, error) {
	if len(raw) == 0 {
		return nil, fmt.Errorf("%w: no persisted result to check against", ErrBadResult)
	}
	prev, err := decodeResult(raw)
	if err != nil {
		return nil, err
	}
	// portmap 1.1.1's CHECK also looks for IPv6 rules that it never made
	// for an IPv4-only container, and fails whenever ip6tables works
	// (containernetworking/plugins#819): its rules are checked here.
	if err := n.execList(ctx, "CHECK", n.runtimeConf(req), prev, "portmap"); err != nil {
		return nil, err
	}
	res, err := newResult(prev, n.NetnsPath(req.AllocID), req)
	if err != nil {
		return nil, err
	}
	if err := n.checkPortmap(ctx, req, res.IP); err != nil {
		return nil, err
	}
	return res, nil
}

// Teardown detaches the allocation with CNI DEL (raw, the persisted
// result, as prevResult when given) and removes its netns. Whatever DEL
// did not remove (all of it when DEL fails, the masquerade rules when the
// netns was already gone) the forced cleanup removes: every iptables rule
// and chain of the allocation, its host-local reservation, libcni's cached
// result and the netns. Tearing down what is gone succeeds.
func (n *Network) Teardown(ctx context.Context, allocID string, raw []byte, req SetupRequest) error {
	req.AllocID = allocID
	norm, err := req.normalize()
	switch {
	case err == nil:
		req = norm
	case allocID == "" || utils.ValidateContainerID(allocID) != nil:
		return err
	default: // DEL finds everything by the allocation ID alone
		req = SetupRequest{AllocID: allocID}
	}
	release, err := n.acquire(ctx)
	if err != nil {
		return err
	}
	defer release()
	return n.teardown(ctx, req, raw, false)
}

// teardown runs DEL and the forced cleanup. afterAdd says that it cleans
// up after a failed ADD, whose half-made rules DEL may well trip over (a
// chain that the collision left out): that is expected and not counted.
func (n *Network) teardown(ctx context.Context, req SetupRequest, raw []byte, afterAdd bool) error {
	id := req.AllocID
	rt := n.runtimeConf(req)
	prev := n.prevResult(raw, rt)
	reserved, _ := n.ipam.reservations()
	var ips []netip.Addr
	for ip, owner := range reserved {
		if owner == id {
			ips = append(ips, ip)
		}
	}
	prevIPs := resultAddrs(prev)
	for _, ip := range prevIPs {
		if owner, ok := reserved[ip]; ok && owner != id {
			// The address went to another allocation (after a reboot):
			// firewall's DEL would remove that one's rules.
			prev, prevIPs = nil, nil
			break
		}
	}
	ips = append(ips, prevIPs...)
	// iptables-nft refuses a chain delete while another process's
	// transaction holds the table ("Device or resource busy"): DEL is
	// idempotent, so it runs again before the cleanup by force. After a
	// failed ADD it does not: its errors are expected there (a chain that
	// the collision left out) and the forced cleanup follows anyway, while
	// Setup holds the host's lock.
	retries := delRetries
	if afterAdd {
		retries = 0
	}
	delErr := retryIptables(ctx, retries, transientIptables, func() error { return n.execList(ctx, "DEL", rt, prev) },
		func(try int, err error) {
			n.log.Debug("CNI DEL hit a busy iptables table, retrying", "alloc_id", id, "try", try, "error", err)
		})
	switch {
	case delErr != nil && afterAdd:
		n.log.Debug("CNI DEL after a failed ADD failed, cleaning up by force", "alloc_id", id, "error", delErr)
	case delErr != nil:
		n.delFailures.Add(1)
		n.log.Warn("CNI DEL failed, cleaning up by force", "alloc_id", id, "error", delErr)
	}
	errs := []error{
		sweep(ctx, n.ruleOf(id, ips)),
		n.release(id),
		n.dropCache(id),
		removeNetns(rt.NetNS),
	}
	if err := errors.Join(errs...); err != nil {
		return fmt.Errorf("%w: allocation %s: %w (CNI DEL: %v)", ErrCleanup, id, err, delErr)
	}
	return nil
}

// release removes the allocation's host-local reservations.
func (n *Network) release(id string) error {
	_, err := n.ipam.release(func(owner string) bool { return owner == id })
	return err
}

// ruleOf matches the iptables rules of allocation id: those whose comment
// names it on this network, and firewall's rules for its addresses that
// no other allocation holds now.
func (n *Network) ruleOf(id string, ips []netip.Addr) func(string, rule) bool {
	reserved, _ := n.ipam.reservations()
	return func(_ string, r rule) bool {
		if net, owner := r.owner(); net == n.list.Name && owner == id {
			return true
		}
		if r.chain != firewallChain {
			return false
		}
		for _, ip := range ips {
			if owner, ok := reserved[ip]; (!ok || owner == id) && r.forAddr(ip) {
				return true
			}
		}
		return false
	}
}

// netnsPath is where the allocation's netns is pinned.
func netnsPath(dir, allocID string) string { return filepath.Join(dir, allocID) }

// delRetries is how many more times Teardown runs a DEL that failed on a
// busy iptables table.
const delRetries = 3
