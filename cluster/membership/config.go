package membership

import (
	"fmt"
	"log/slog"
	"time"

	"github.com/hashicorp/memberlist"
)

// Defaults for the fields of Config that are not memberlist's.
const (
	DefaultBroadcastTimeout = 5 * time.Second
	DefaultEventBuffer      = 256
	DefaultReapAfter        = 24 * time.Hour
)

// Config configures one member. Zero durations and counts take
// memberlist.DefaultLANConfig's values (or the defaults above).
type Config struct {
	// Name is the memberlist node name, unique in the cluster; it defaults
	// to Meta.NodeName, and Meta.NodeName defaults to it.
	Name string
	// BindAddr is the IP gossip listens on (default "0.0.0.0"); BindPort
	// 0 lets the OS choose a port (read it back from LocalMember).
	BindAddr string
	BindPort int
	// AdvertiseAddr and AdvertisePort are what the others dial; empty/0
	// derives them from the bind address.
	AdvertiseAddr string
	AdvertisePort int

	Meta Meta

	// WAN makes this member part of the servers' WAN pool, which joins
	// the servers of every region (federation): memberlist's WAN timing,
	// peers of any region admitted, clients refused. The LAN pool (false)
	// is one region's servers and clients.
	WAN bool

	// SecretKey, when set (16, 24 or 32 bytes), encrypts gossip.
	SecretKey []byte
	// Keys are more keys of the keyring beside SecretKey (the primary):
	// gossip encrypted with any of them is read (a rotation under way).
	Keys [][]byte

	// Failure detection and gossip timing (memberlist's knobs).
	ProbeInterval    time.Duration
	ProbeTimeout     time.Duration
	GossipInterval   time.Duration
	SuspicionMult    int
	PushPullInterval time.Duration
	TCPTimeout       time.Duration

	// BroadcastTimeout bounds how long UpdateMeta and Leave wait for the
	// change to be gossiped.
	BroadcastTimeout time.Duration
	// EventBuffer is the capacity of the Events channel.
	EventBuffer int
	// ReapAfter is how long left and failed members stay in Members.
	ReapAfter time.Duration
	// Now is the clock used for reaping (default time.Now).
	Now func() time.Time

	// Logger receives this package's and memberlist's logs (nil: discarded).
	Logger *slog.Logger
}

// withDefaults fills in the defaults and validates cfg.
func (cfg Config) withDefaults() (Config, error) {
	if cfg.Name == "" {
		cfg.Name = cfg.Meta.NodeName
	}
	if cfg.Meta.NodeName == "" {
		cfg.Meta.NodeName = cfg.Name
	}
	if cfg.Name == "" {
		return cfg, fmt.Errorf("%w: node name is empty", ErrInvalidConfig)
	}
	if cfg.BindPort < 0 || cfg.BindPort > 65535 || cfg.AdvertisePort < 0 || cfg.AdvertisePort > 65535 {
		return cfg, fmt.Errorf("%w: port out of range (bind %d, advertise %d)", ErrInvalidConfig, cfg.BindPort, cfg.AdvertisePort)
	}
	if err := cfg.Meta.Validate(); err != nil {
		return cfg, err
	}
	if cfg.WAN && cfg.Meta.Role != RoleServer {
		return cfg, fmt.Errorf("%w: only servers join the WAN pool", ErrInvalidConfig)
	}
	setDefault(&cfg.BroadcastTimeout, DefaultBroadcastTimeout)
	setDefault(&cfg.EventBuffer, DefaultEventBuffer)
	setDefault(&cfg.ReapAfter, DefaultReapAfter)
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.DiscardHandler)
	}
	return cfg, nil
}

// memberlistConfig builds memberlist's configuration; the delegates are
// set by the caller.
func (cfg Config) memberlistConfig() *memberlist.Config {
	mc := memberlist.DefaultLANConfig()
	if cfg.WAN {
		mc = memberlist.DefaultWANConfig()
	}
	mc.Name = cfg.Name
	mc.BindAddr = orDefault(cfg.BindAddr, mc.BindAddr)
	mc.BindPort = cfg.BindPort
	mc.AdvertiseAddr = cfg.AdvertiseAddr
	mc.AdvertisePort = cfg.AdvertisePort
	if cfg.AdvertisePort == 0 {
		mc.AdvertisePort = cfg.BindPort
	}
	override(&mc.ProbeInterval, cfg.ProbeInterval)
	override(&mc.ProbeTimeout, cfg.ProbeTimeout)
	override(&mc.GossipInterval, cfg.GossipInterval)
	override(&mc.SuspicionMult, cfg.SuspicionMult)
	override(&mc.PushPullInterval, cfg.PushPullInterval)
	override(&mc.TCPTimeout, cfg.TCPTimeout)
	mc.Logger = newStdLogger(cfg.Logger.With("component", "memberlist"))
	return mc
}

// setDefault sets *v to def when *v is zero.
func setDefault[T comparable](v *T, def T) {
	var zero T
	if *v == zero {
		*v = def
	}
}

// override sets *v to val when val is not zero.
func override[T comparable](v *T, val T) {
	var zero T
	if val != zero {
		*v = val
	}
}

func orDefault(v, def string) string {
	if v == "" {
		return def
	}
	return v
}
