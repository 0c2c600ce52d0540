package agent

import (
	"fmt"
	"github.com/troupe-dev/troupe/cluster/tlsutil"
	"log/slog"
	"net"
	"strconv"
	"time"

	"github.com/troupe-dev/troupe/actors"
	"github.com/troupe-dev/troupe/actors/server"
	"github.com/troupe-dev/troupe/cluster/state"
	"github.com/troupe-dev/troupe/jobspec"
	"github.com/troupe-dev/troupe/messages"
	"github.com/troupe-dev/troupe/runtime/artifact"
	"github.com/troupe-dev/troupe/runtime/cgroups"
	"github.com/troupe-dev/troupe/runtime/device"
	"github.com/troupe-dev/troupe/telemetry"
)

// Config is an agent's configuration.
type Config struct {
	Dev bool
	// ACLEnabled turns on ACL tokens and policies (-acl-enabled, Nomad's
	// acl { enabled = true }): every API route then checks its request's
	// token. A server's acl-bootstrap-reset file in its data dir
	// (<data dir>/server) lets one more bootstrap through.
	ACLEnabled bool
	// ACLTokenTTL is how long a client-only agent keeps a token it
	// resolved through the servers (Nomad's client acl token_ttl; 0:
	// 30 s).
	ACLTokenTTL time.Duration
	// AuthoritativeRegion is the region whose ACL policies and global
	// tokens every other region replicates (Nomad's server {
	// authoritative_region }; "": this region is its own authority).
	// ReplicationToken is a management token's secret of that region
	// (Nomad's acl { replication_token }); ACLReplicationInterval is
	// how often the leader pulls (0: DefaultACLReplicationInterval).
	AuthoritativeRegion    string
	ReplicationToken       string
	ACLReplicationInterval time.Duration
	// MultiregionRolloutInterval is how often the leader moves its
	// region's multiregion deployments along their rollout (0:
	// DefaultMultiregionRolloutInterval).
	MultiregionRolloutInterval time.Duration
	// StopTasksOnShutdown stops every task and removes every bridge
	// network on Shutdown, as -dev does (whose state dies with it).
	// Otherwise tasks outlive the agent, which re-attaches on start.
	StopTasksOnShutdown bool
	Server              bool
	Client              bool
	DataDir             string
	HTTPAddr            string
	NodeName            string
	Datacenter          string
	Region              string
	NodeClass           string
	// NodePool is the client's node pool (Nomad's client node_pool; ""
	// is "default"); the servers create it when the node registers.
	NodePool string
	Meta     map[string]string
	// HostVolumes are the host directories the client offers to groups'
	// volume "x" { type = "host", source = "name" } blocks, by name
	// (Nomad's client host_volume "name" { path, read_only }; the
	// -host-volume flag). Validate checks the names and that each path
	// is an existing directory.
	HostVolumes map[string]*messages.ClientHostVolume
	// ExecutorPath is the binary the exec driver runs as its executor
	// (troupe itself); ExecutorArgs its leading arguments.
	ExecutorPath string
	ExecutorArgs []string
	ExecutorEnv  []string
	// ChrootEnv is the root of isolated exec tasks, host path to path in
	// the task (Nomad's client chroot_env); nil: exec.DefaultChrootEnv.
	ChrootEnv map[string]string
	// UserDenylist are the users exec tasks may not ask for (Nomad's
	// user.denylist); nil: exec.DefaultUserDenylist (root), empty: none.
	UserDenylist []string
	// CgroupParent is the cgroup below which exec, raw_exec, java and
	// qemu tasks get theirs (-cgroup-parent, Nomad's cgroup_parent;
	// default "/troupe", "/troupe.slice" on v2). The client owns it: at
	// start it removes the task groups there of allocations it does not
	// have, so two clients on one host need a parent each.
	// PidsLimit bounds each exec task's processes (default 16384).
	CgroupParent string
	PidsLimit    int64
	// Raft snapshot tuning.
	SnapshotThreshold uint64
	SnapshotInterval  time.Duration
	// ClientBatch is how long a client gathers alloc updates.
	ClientBatch time.Duration
	// PluginProbeInterval is how often CSI plugin tasks are fingerprinted.
	PluginProbeInterval time.Duration
	// HostStatsInterval is how often the client samples its host's CPU
	// for /v1/client/stats; 0 means HostStatsInterval (1s).
	HostStatsInterval time.Duration
	// NetworkGCInterval is how often the bridge network is swept for what
	// allocations this client no longer knows left behind (at start too);
	// 0 means DefaultNetworkGCInterval.
	NetworkGCInterval time.Duration
	// VolumeRetry is the backoff of CSI unpublish retries: node unpublish
	// on clients, controller unpublish on the leader (1 s doubling to
	// 1 min for 24 h by default).
	VolumeRetry actors.Retry
	// ContainerdAddress is containerd's socket for the containerd driver
	// ("" = /run/containerd/containerd.sock).
	ContainerdAddress string
	// ContainerdNamespace is the containerd namespace of troupe's
	// containers ("" = troupe).
	ContainerdNamespace string
	// QemuImagePaths are host directories where a qemu task's absolute
	// image_path may be, besides its allocation dir (Nomad's image_paths).
	QemuImagePaths []string
	// JavaHome is the JVM the java driver runs (JavaHome/bin/java; "" =
	// java on PATH).
	JavaHome string
	// RawExecEnabled enables the raw_exec driver (Nomad's client plugin
	// "raw_exec" { config { enabled = true } }): its tasks run on the
	// host's root as the agent's user. Off, the node does not offer it;
	// a dev agent has it on (RawExec).
	RawExecEnabled bool
	// Artifacts bounds the fetch of a task's artifacts (Nomad's client
	// artifact block: timeouts, HTTP body size, decompression limits); a
	// zero field takes runtime/artifact's default.
	Artifacts artifact.Limits
	// TLS is Nomad's tls block: HTTPS on the API (HTTP), with client
	// certificates when VerifyHTTPSClient.
	TLS tlsutil.Config
	// ReservedCores are cores the client keeps for the host (Nomad's
	// client reserved { cores }): the scheduler reserves none of them
	// for tasks with resources { cores }.
	ReservedCores []uint32
	// DevicePlugins fingerprint and hand out devices such as GPUs
	// (nil = the NVIDIA plugin on the host's NVML, which reports nothing
	// on a host without the library).
	DevicePlugins []device.Plugin
	// Bridge networking (CNI): the bridge, its subnet, where the CNI
	// plugins are, and where netns files and host-local IPAM state live
	// (tmpfs by default, so a reboot wipes them).
	BridgeName    string
	BridgeSubnet  string
	CNINetwork    string // the CNI network's name ("" = troupe)
	CNIPluginDirs []string
	CNIStateDir   string
	NetnsDir      string

	// JobLimits bound what a job may ask for (job_max_count and the
	// lengths of names, meta and env); zero fields keep jobspec's
	// defaults.
	JobLimits jobspec.Limits
	// MaxPlacementsPerEval bounds the allocations one scheduler plan
	// places (0: no bound); a larger job is placed in several plans.
	MaxPlacementsPerEval int
	// JobVersions is how many versions of each job the servers keep
	// (Nomad's job_tracked_versions; 0 = 6). Every server must keep the
	// same number.
	JobVersions int
	// GC holds the garbage collector's thresholds and interval (Nomad's
	// eval_gc_threshold, job_gc_threshold, node_gc_threshold,
	// job_gc_interval; zero fields: 1h, 4h, 24h, 5m).
	GC server.GCConfig

	// Cluster mode (BindAddr set): the RPC (gRPC actor transport), gossip
	// and raft listen on BindAddr at these ports.
	BindAddr        string
	RPCPort         int
	GossipPort      int
	RaftPort        int
	BootstrapExpect int
	// WANPort is a server's port in the WAN pool of every region's
	// servers (federation; 0: DefaultWANPort).
	WANPort int
	// Join lists gossip addresses of agents to join (servers).
	Join []string
	// RetryJoin lists WAN addresses (host or host:port) of servers,
	// of this region or others, whose WAN pool a server joins, retrying
	// until one answers (-retry-join, Nomad's server { retry_join }).
	RetryJoin []string
	// Servers lists the RPC addresses of servers (clients).
	Servers []string
	// Failure detection and heartbeats.
	HeartbeatTTL   time.Duration // the least TTL handed to a client
	HeartbeatGrace time.Duration
	GossipInterval time.Duration // 0 = memberlist's LAN defaults
	// GossipKey encrypts gossip (Nomad's server encrypt / -encrypt): a
	// base64 key of 16, 24 or 32 bytes that every agent of the cluster
	// shares; "" gossips in clear text.
	GossipKey   string
	RaftTimeout time.Duration // raft heartbeat and election timeouts
	// RPCHoldTimeout bounds how long a consistent read or a write waits
	// for a leader (one elected, its store caught up) before it is
	// answered 500 "No cluster leader" (Nomad's rpc_hold_timeout; 0 = 5s).
	RPCHoldTimeout time.Duration

	// MaxHeartbeatsPerSecond is the leader's heartbeat budget: TTLs grow
	// with the number of live nodes to stay under it (Nomad's
	// max_heartbeats_per_second; 0 = 50).
	MaxHeartbeatsPerSecond float64

	Logger *slog.Logger
	// Telemetry is Nomad's telemetry block (GET /v1/metrics).
	Telemetry telemetry.Config
	// EventBufferSize is how many applied commands the event stream can
	// replay (Nomad's event_buffer_size; 0: state.DefaultEventBufferSize).
	EventBufferSize int
}

// DefaultNetworkGCInterval is Config.NetworkGCInterval's default.
const DefaultNetworkGCInterval = 5 * time.Minute

// DefaultConfig returns Nomad's defaults.
func DefaultConfig() *Config {
	return &Config{
		Server: true, Client: true,
		HTTPAddr: "127.0.0.1:4646", Datacenter: "dc1", Region: "global",
		SnapshotThreshold: 8192, SnapshotInterval: 2 * time.Minute,
		ClientBatch: 50 * time.Millisecond,
		RPCPort:     4647, GossipPort: 4648, RaftPort: 4649, WANPort: DefaultWANPort,
		HeartbeatTTL: 10 * time.Second, HeartbeatGrace: 10 * time.Second, MaxHeartbeatsPerSecond: 50,
		VolumeRetry: actors.DefaultRetry(),
	}
}

// RawExec reports whether the client offers raw_exec: enabled, or a dev
// agent (as Nomad's).
func (c *Config) RawExec() bool { return c.RawExecEnabled || c.Dev }

// Clustered reports whether the agent talks to other agents (it has a
// bind address for its RPC, gossip and raft listeners).
func (c *Config) Clustered() bool { return c.BindAddr != "" }

func (c *Config) addr(port int) string {
	return net.JoinHostPort(c.BindAddr, strconv.Itoa(port))
}

// Validate checks the configuration.
func (c *Config) Validate() error {
	switch {
	case !c.Server && !c.Client:
		return fmt.Errorf("%w: neither server nor client enabled", ErrConfig)
	case c.DataDir == "" && !c.Dev:
		return fmt.Errorf("%w: -data-dir is required unless -dev", ErrConfig)
	case c.Client && !c.Server && (!c.Clustered() || len(c.Servers) == 0):
		return fmt.Errorf("%w: a client-only agent needs -bind and -servers", ErrConfig)
	case c.Server && c.Clustered() && c.BootstrapExpect < 1 && len(c.Join) == 0:
		return fmt.Errorf("%w: a clustered server needs -bootstrap-expect or -join", ErrConfig)
	case c.BootstrapExpect < 0:
		return fmt.Errorf("%w: -bootstrap-expect must not be negative", ErrConfig)
	case c.Dev && c.Clustered():
		return fmt.Errorf("%w: -dev runs alone; drop -bind", ErrConfig)
	}
	if _, err := state.NodeNodePool(c.NodePool); c.Client && err != nil {
		return fmt.Errorf("%w: -node-pool: %w", ErrConfig, err)
	}
	if _, err := GossipKeyBytes(c.GossipKey); err != nil {
		return fmt.Errorf("%w: %w", ErrConfig, err)
	}
	if c.Client && c.CgroupParent != "" {
		if err := cgroups.CheckParent(c.CgroupParent); err != nil {
			return fmt.Errorf("%w: -cgroup-parent: %w", ErrConfig, err)
		}
	}
	if c.Client {
		return c.validateHostVolumes()
	}
	return nil
}

// DefaultRPCHoldTimeout is Config.RPCHoldTimeout's default (Nomad's).
const DefaultRPCHoldTimeout = 5 * time.Second

// ACLResetFileName is the file in a server's data dir (<data dir>/server)
// whose index lets one more ACL bootstrap through, as Nomad's.
const ACLResetFileName = "acl-bootstrap-reset"
