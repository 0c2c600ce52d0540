package cni

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"
)

func TestNewRejectsABadConfigBeforeCreatingAnything(t *testing.T) {
	dir := t.TempDir()
	valid := Config{IPAMDataDir: filepath.Join(dir, "ipam"), NetnsDir: filepath.Join(dir, "netns")}
	for _, c := range []struct {
		name   string
		change func(*Config)
		is     error
		says   string
	}{
		{"not a CIDR", func(c *Config) { c.Subnet = "172.26.64.0" }, ErrInvalidConfig, `subnet "172.26.64.0" is not a CIDR`},
		{"prefix too long", func(c *Config) { c.Subnet = "10.99.0.0/33" }, ErrInvalidConfig, `"10.99.0.0/33" is not a CIDR`},
		{"garbage", func(c *Config) { c.Subnet = "ten.0.0.0/8" }, ErrInvalidConfig, `"ten.0.0.0/8"`},
		{"IPv6", func(c *Config) { c.Subnet = "fd00::/64" }, ErrInvalidConfig, `"fd00::/64" is not IPv4`},
		{"too small", func(c *Config) { c.Subnet = "10.99.0.0/31" }, ErrInvalidConfig, `"10.99.0.0/31" is too small`},
		{"host bits", func(c *Config) { c.Subnet = "10.99.0.5/24" }, ErrInvalidConfig, "the network is 10.99.0.0/24"},
		{"bridge name too long", func(c *Config) { c.Bridge = "a-very-long-bridge" }, ErrInvalidConfig, `bridge "a-very-long-bridge"`},
		{"network name", func(c *Config) { c.Name = "bad/name" }, ErrInvalidConfig, `network name "bad/name"`},
		{"relative dir", func(c *Config) { c.NetnsDir = "netns" }, ErrInvalidConfig, `NetnsDir "netns"`},
		{"persistent IPAM dir", func(c *Config) { c.IPAMDataDir = "/var/lib/cni/" }, ErrInvalidConfig, "/var/lib/cni"},
		{"no plugins", func(c *Config) { c.PluginDirs = []string{filepath.Join(dir, "none")} }, ErrPluginNotFound, `"loopback"`},
	} {
		t.Run(c.name, func(t *testing.T) {
			cfg := valid
			c.change(&cfg)
			n, err := New(cfg)
			require.Nil(t, n)
			require.ErrorIs(t, err, c.is)
			require.ErrorContains(t, err, c.says)
		})
	}
	entries, err := os.ReadDir(dir)
	require.NoError(t, err)
	require.Empty(t, entries, "New creates nothing")
}

func TestNewFillsInTheDefaults(t *testing.T) {
	if _, err := os.Stat(filepath.Join(DefaultPluginDir, "bridge")); err != nil {
		t.Skip("the standard CNI plugins are not in " + DefaultPluginDir)
	}
	n, err := New(Config{})
	require.NoError(t, err)
	require.Equal(t, Config{
		PluginDirs: []string{"/usr/lib/cni"}, Name: "troupe", Bridge: "troupe0", Subnet: "172.26.64.0/20",
		IPAMDataDir: "/var/run/cni", CacheDir: "/var/run/cni/cache", NetnsDir: "/var/run/netns",
		LockFile: "/run/troupe/cni.lock",
		Logger:   n.cfg.Logger,
	}, n.cfg)
	require.Equal(t, "/var/run/netns/abc", n.NetnsPath("abc"))
	require.Equal(t, "/var/run/cni/troupe", n.ipam.dir)

	// The configuration list that the plugins get.
	require.Equal(t, "troupe", n.list.Name)
	require.Equal(t, "1.0.0", n.list.CNIVersion)
	var types []string
	for _, p := range n.list.Plugins {
		types = append(types, p.Network.Type)
	}
	require.Equal(t, []string{"loopback", "bridge", "firewall", "portmap"}, types)
	require.JSONEq(t, `{"type":"bridge","bridge":"troupe0","isGateway":true,"ipMasq":true,"hairpinMode":true,
		"ipam":{"type":"host-local","ranges":[[{"subnet":"172.26.64.0/20"}]],"routes":[{"dst":"0.0.0.0/0"}],
		"dataDir":"/var/run/cni"}}`, string(n.list.Plugins[1].Bytes))
	require.JSONEq(t, `{"type":"firewall","backend":"iptables"}`, string(n.list.Plugins[2].Bytes))
	require.JSONEq(t, `{"type":"portmap","capabilities":{"portMappings":true},"snat":true}`,
		string(n.list.Plugins[3].Bytes))
}

func TestRequestsCarryTheirIDsAndPorts(t *testing.T) {
	req, err := SetupRequest{AllocID: "a1", JobID: "web", Group: "fe",
		Ports: []PortMapping{{Label: "http", HostPort: 8080}, {HostPort: 53, ContainerPort: 5353, Protocol: "udp"}}}.normalize()
	require.NoError(t, err)
	require.Equal(t, [][2]string{{"IgnoreUnknown", "1"}, {"TROUPE_ALLOC_ID", "a1"}, {"TROUPE_JOB_ID", "web"},
		{"TROUPE_GROUP", "fe"}}, req.cniArgs())
	require.Equal(t, map[string]any{"portMappings": []map[string]any{
		{"hostPort": 8080, "containerPort": 8080, "protocol": "tcp"},
		{"hostPort": 53, "containerPort": 5353, "protocol": "udp"},
	}}, req.capabilityArgs())
	require.Equal(t, [][2]string{{"IgnoreUnknown", "1"}, {"TROUPE_ALLOC_ID", "a2"}},
		SetupRequest{AllocID: "a2"}.cniArgs())
}
