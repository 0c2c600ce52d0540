package cni

import (
	"encoding/json"
	"fmt"
	"log/slog"
	"net/netip"
	"path/filepath"

	"github.com/containernetworking/cni/libcni"
	"github.com/containernetworking/cni/pkg/invoke"
	"github.com/containernetworking/cni/pkg/utils"
)

// Defaults of Config.
const (
	DefaultPluginDir   = "/usr/lib/cni"
	DefaultName        = "troupe"
	DefaultBridge      = "troupe0"
	DefaultSubnet      = "172.26.64.0/20"
	DefaultIPAMDataDir = "/var/run/cni" // tmpfs: wiped at reboot, on purpose
	DefaultNetnsDir    = "/var/run/netns"
	DefaultLockFile    = "/run/troupe/cni.lock"
)

// CNIVersion is the version of the network configuration: the newest that
// the standard plugins packaged by Debian (containernetworking-plugins
// 1.1.1) speak. CNI GC needs 1.1.0, so GC does its own sweep (see GC).
const CNIVersion = "1.0.0"

// IfName is the allocation's interface inside its network namespace.
const IfName = "eth0"

// plugins are the plugin types of the network, in ADD order.
var plugins = []string{"loopback", "bridge", "firewall", "portmap"}

// Config configures a Network. Zero fields take the defaults above.
type Config struct {
	// PluginDirs are searched for the plugin binaries.
	PluginDirs []string
	// Name is the CNI network name. It names the host-local state
	// directory (IPAMDataDir/Name) and appears in the comments of the
	// iptables rules that the plugins add.
	Name string
	// Bridge is the host bridge that allocations attach to.
	Bridge string
	// Subnet is the IPv4 network that allocations get addresses from; its
	// first address is the bridge's (the gateway).
	Subnet string
	// IPAMDataDir is host-local's state directory. It must be on a tmpfs
	// (wiped at reboot), never /var/lib/cni: after a reboot every netns is
	// gone and ADD runs again, and stale reservations would collide.
	IPAMDataDir string
	// CacheDir holds libcni's result cache; default IPAMDataDir/cache.
	CacheDir string
	// NetnsDir holds the allocations' network namespaces, one bind mount
	// named after each allocation ID.
	NetnsDir string
	// LockFile is flocked around every CNI operation, so that the
	// plugins' iptables changes of all troupe networks on the host run
	// one at a time: iptables-nft takes no lock of its own, and two
	// processes changing the same table at once can lose a chain. Its
	// directory must belong to the agent's user and be writable by no
	// one else (see lockFile): a lock in a world-writable directory could
	// be held, or pointed elsewhere, by any user.
	LockFile string
	// Logger gets warnings about cleanups; default discards.
	Logger *slog.Logger
}

// withDefaults returns c with its zero fields set.
func (c Config) withDefaults() Config {
	if len(c.PluginDirs) == 0 {
		c.PluginDirs = []string{DefaultPluginDir}
	}
	if c.Name == "" {
		c.Name = DefaultName
	}
	if c.Bridge == "" {
		c.Bridge = DefaultBridge
	}
	if c.Subnet == "" {
		c.Subnet = DefaultSubnet
	}
	if c.IPAMDataDir == "" {
		c.IPAMDataDir = DefaultIPAMDataDir
	}
	if c.CacheDir == "" {
		c.CacheDir = filepath.Join(c.IPAMDataDir, "cache")
	}
	if c.NetnsDir == "" {
		c.NetnsDir = DefaultNetnsDir
	}
	if c.LockFile == "" {
		c.LockFile = DefaultLockFile
	}
	if c.Logger == nil {
		c.Logger = slog.New(slog.DiscardHandler)
	}
	return c
}

// validate checks c (with defaults) and returns its subnet.
func (c Config) validate() (netip.Prefix, error) {
	subnet, err := netip.ParsePrefix(c.Subnet)
	switch {
	case err != nil:
		return subnet, fmt.Errorf("%w: subnet %q is not a CIDR: %v", ErrInvalidConfig, c.Subnet, err)
	case !subnet.Addr().Is4():
		return subnet, fmt.Errorf("%w: subnet %q is not IPv4", ErrInvalidConfig, c.Subnet)
	case subnet.Bits() > 30:
		return subnet, fmt.Errorf("%w: subnet %q is too small (at most /30)", ErrInvalidConfig, c.Subnet)
	case subnet != subnet.Masked():
		return subnet, fmt.Errorf("%w: subnet %q has host bits set (the network is %s)",
			ErrInvalidConfig, c.Subnet, subnet.Masked())
	}
	if e := utils.ValidateNetworkName(c.Name); e != nil {
		return subnet, fmt.Errorf("%w: network name %q: %s", ErrInvalidConfig, c.Name, e.Msg)
	}
	if e := utils.ValidateInterfaceName(c.Bridge); e != nil {
		return subnet, fmt.Errorf("%w: bridge %q: %s", ErrInvalidConfig, c.Bridge, e.Msg)
	}
	for _, d := range [][2]string{{"IPAMDataDir", c.IPAMDataDir}, {"CacheDir", c.CacheDir},
		{"NetnsDir", c.NetnsDir}, {"LockFile", c.LockFile}} {
		if !filepath.IsAbs(d[1]) {
			return subnet, fmt.Errorf("%w: %s %q is not an absolute path", ErrInvalidConfig, d[0], d[1])
		}
	}
	if filepath.Clean(c.IPAMDataDir) == "/var/lib/cni" {
		return subnet, fmt.Errorf("%w: IPAMDataDir must not be /var/lib/cni (it survives reboots); use /var/run/cni",
			ErrInvalidConfig)
	}
	for _, p := range plugins {
		if _, err := invoke.FindInPath(p, c.PluginDirs); err != nil {
			return subnet, fmt.Errorf("%w: %q in %v", ErrPluginNotFound, p, c.PluginDirs)
		}
	}
	return subnet, nil
}

// confList builds the network configuration list.
func (c Config) confList() (*libcni.NetworkConfigList, error) {
	type obj = map[string]any
	list := obj{
		"cniVersion": CNIVersion,
		"name":       c.Name,
		"plugins": []obj{
			{"type": "loopback"},
			{
				"type": "bridge", "bridge": c.Bridge,
				"isGateway": true, "ipMasq": true, "hairpinMode": true,
				"ipam": obj{
					"type":    "host-local",
					"ranges":  [][]obj{{{"subnet": c.Subnet}}},
					"routes":  []obj{{"dst": "0.0.0.0/0"}},
					"dataDir": c.IPAMDataDir,
				},
			},
			{"type": "firewall", "backend": "iptables"},
			{"type": "portmap", "capabilities": obj{"portMappings": true}, "snat": true},
		},
	}
	data, err := json.Marshal(list)
	if err != nil {
		return nil, err
	}
	return libcni.NetworkConfFromBytes(data)
}
