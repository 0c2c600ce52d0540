package membership

import (
	"fmt"
	"log/slog"
	"net"
	"sync"
	"time"

	"github.com/hashicorp/memberlist"
)

// Membership is this agent's place in the gossip cluster.
type Membership struct {
	cfg    Config
	region string // immutable: the cluster's region
	ml     *memberlist.Memberlist
	keys   *memberlist.Keyring // nil: gossip is not encrypted
	reg    *registry
	events *eventQueue
	log    *slog.Logger

	opMu sync.Mutex // serialises UpdateMeta, Leave and Shutdown

	mu        sync.Mutex // guards the fields below
	meta      Meta
	metaBytes []byte
	leaving   bool
	shutdown  bool
}

// New starts gossip (listening on the bind address) without contacting
// anyone; call Join to enter a cluster.
func New(cfg Config) (*Membership, error) {
	cfg, err := cfg.withDefaults()
	if err != nil {
		return nil, err
	}
	buf, err := encodeMeta(cfg.Meta, false)
	if err != nil {
		return nil, err
	}
	m := &Membership{
		cfg:       cfg,
		region:    cfg.Meta.Region,
		reg:       newRegistry(cfg.Now, cfg.ReapAfter),
		events:    newEventQueue(cfg.EventBuffer),
		log:       cfg.Logger,
		meta:      cfg.Meta,
		metaBytes: buf,
	}
	mc := cfg.memberlistConfig()
	if cfg.SecretKey != nil {
		if m.keys, err = memberlist.NewKeyring(cfg.Keys, cfg.SecretKey); err != nil {
			return nil, fmt.Errorf("%w: keyring: %w", ErrStart, err)
		}
		mc.Keyring = m.keys
	}
	d := (*delegate)(m)
	mc.Delegate, mc.Events, mc.Alive, mc.Merge, mc.Conflict = d, d, d, d, d
	ml, err := memberlist.Create(mc)
	if err != nil {
		return nil, fmt.Errorf("%w: bind %s:%d: %w", ErrStart, mc.BindAddr, cfg.BindPort, err)
	}
	m.ml = ml
	return m, nil
}

// Join contacts each address ("host:port", or "host" for the default port)
// and exchanges state with it. It returns how many nodes were contacted: a
// positive count means this node is in the cluster. err is a *JoinError
// naming each address that failed, also when others succeeded; check
// IsRefused(err) to tell a refusal (wrong region, duplicate name or ID)
// from an unreachable address. Retrying is the caller's job.
func (m *Membership) Join(addrs []string) (int, error) {
	if m.isShutdown() {
		return 0, ErrShutdown
	}
	if len(addrs) == 0 {
		return 0, fmt.Errorf("%w: no addresses given", ErrJoin)
	}
	total := 0
	var failed []*AddrError
	for _, addr := range addrs {
		n, err := m.ml.Join([]string{addr})
		total += n
		if err != nil {
			failed = append(failed, newAddrError(addr, err))
		}
	}
	if len(failed) > 0 {
		return total, &JoinError{Tried: len(addrs), Failed: failed}
	}
	return total, nil
}

// Members returns every member this node knows, sorted by name, including
// left and failed ones (until Config.ReapAfter) and this node itself.
func (m *Membership) Members() []Member {
	return m.reg.list(nil)
}

// Servers returns the alive servers, sorted by name (client-side server
// discovery). A server that is leaving is left out. It is cheap (the list
// is kept between changes); the Members' Tags maps are shared, read only.
func (m *Membership) Servers() []Member {
	return m.reg.servers()
}

// Events delivers membership changes, including this node's own join at
// start. The channel is buffered (Config.EventBuffer); when the reader falls
// behind the oldest event is dropped (see DroppedEvents). It is closed by
// Shutdown.
func (m *Membership) Events() <-chan Event {
	return m.events.ch
}

// DroppedEvents is how many events were dropped because the buffer was full.
func (m *Membership) DroppedEvents() uint64 {
	return m.events.droppedCount()
}

// LocalMember returns this node as the cluster sees it; Port is the actual
// gossip port, also when the OS chose it.
func (m *Membership) LocalMember() Member {
	if mem, ok := m.reg.get(m.cfg.Name); ok {
		return mem
	}
	n := m.ml.LocalNode()
	m.mu.Lock()
	defer m.mu.Unlock()
	e := entry{name: n.Name, addr: n.Addr, port: n.Port, status: StatusAlive, meta: m.meta}
	return e.member()
}

// GossipAddr is this node's advertised gossip address (host:port), the
// address others pass to Join.
func (m *Membership) GossipAddr() string {
	n := m.ml.LocalNode()
	return net.JoinHostPort(n.Addr.String(), fmt.Sprint(n.Port))
}

func (m *Membership) isShutdown() bool {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.shutdown
}

// UpdateMeta replaces this node's metadata and gossips it, waiting up to
// Config.BroadcastTimeout for the broadcast. Role, region, node ID and node
// name cannot change (an empty NodeName keeps the current one). Too large
// or invalid metadata is refused and changes nothing.
func (m *Membership) UpdateMeta(meta Meta) error {
	m.opMu.Lock()
	defer m.opMu.Unlock()
	if err := m.setMeta(meta); err != nil {
		return err
	}
	if err := m.ml.UpdateNode(m.cfg.BroadcastTimeout); err != nil {
		return fmt.Errorf("membership: metadata updated locally, gossip incomplete: %w", err)
	}
	return nil
}

func (m *Membership) setMeta(meta Meta) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.shutdown {
		return ErrShutdown
	}
	if meta.NodeName == "" {
		meta.NodeName = m.meta.NodeName
	}
	if err := meta.Validate(); err != nil {
		return err
	}
	if err := m.meta.checkChange(meta); err != nil {
		return err
	}
	buf, err := encodeMeta(meta, m.leaving)
	if err != nil {
		return err
	}
	m.meta, m.metaBytes = meta, buf
	return nil
}

// Leave leaves the cluster gracefully: it first gossips that this node is
// leaving (so that the others record "left", not "failed"), then
// broadcasts memberlist's leave, each step waiting up to timeout. Gossip
// keeps running until Shutdown.
func (m *Membership) Leave(timeout time.Duration) error {
	m.opMu.Lock()
	defer m.opMu.Unlock()
	if err := m.markLeaving(); err != nil {
		return err
	}
	if err := m.ml.UpdateNode(timeout); err != nil {
		m.log.Warn("membership: leave intent not fully gossiped; some members may record a failure", "err", err)
	}
	if err := m.ml.Leave(timeout); err != nil {
		return fmt.Errorf("membership: leave: %w", err)
	}
	return nil
}

func (m *Membership) markLeaving() error {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.shutdown {
		return ErrShutdown
	}
	buf, err := encodeMeta(m.meta, true)
	if err != nil {
		return err
	}
	m.leaving, m.metaBytes = true, buf
	return nil
}

// Shutdown stops gossip without a leave (the others will see this node
// fail unless Leave was called first) and closes the Events channel. It is
// safe to call more than once.
func (m *Membership) Shutdown() error {
	m.opMu.Lock()
	defer m.opMu.Unlock()
	m.mu.Lock()
	done := m.shutdown
	m.shutdown = true
	m.mu.Unlock()
	if done {
		return nil
	}
	err := m.ml.Shutdown()
	m.events.close()
	if err != nil {
		return fmt.Errorf("membership: shutdown: %w", err)
	}
	return nil
}
