package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net"
	"os"
	"os/signal"
	"strings"
	"syscall"
	"time"

	"github.com/troupe-dev/troupe/actors/node"
	"github.com/troupe-dev/troupe/agent"
	"github.com/troupe-dev/troupe/cluster/state"
	"github.com/troupe-dev/troupe/jobspec"
	"github.com/troupe-dev/troupe/runtime/driver/exec"
)

// agentCommand runs `troupe agent`: the cluster daemon.
func agentCommand(args []string) int {
	return runAgent(args, os.Stderr)
}

// agentRun is what runAgent needs besides the agent's config.
type agentRun struct {
	cpuProfile, level string
	jsonLogs          bool
}

// parseAgentArgs reads the -config files, then the flags over them, into
// the agent's config. Errors are printed to stderr.
func parseAgentArgs(args []string, stderr io.Writer) (*agent.Config, *agentRun, error) {
	cfg := agent.DefaultConfig()
	if err := loadAgentFiles(cfg, configPaths(args)); err != nil {
		fmt.Fprintln(stderr, "Error:", err)
		return nil, nil, err
	}
	fs := flag.NewFlagSet("agent", flag.ContinueOnError)
	var configFiles listFlag
	fs.Var(&configFiles, "config", "agent config file (HCL, Nomad's agent configuration; repeatable, later files and the flags override earlier ones)")
	fs.SetOutput(stderr)
	fs.BoolVar(&cfg.ACLEnabled, "acl-enabled", cfg.ACLEnabled, "require ACL tokens on every API request (bootstrap: POST /v1/acl/bootstrap)")
	fs.DurationVar(&cfg.ACLTokenTTL, "acl-token-ttl", cfg.ACLTokenTTL, "how long a client keeps a token it resolved through the servers (0: 30s)")
	fs.StringVar(&cfg.AuthoritativeRegion, "authoritative-region", cfg.AuthoritativeRegion, "the region whose ACL policies and global tokens this region's servers replicate, and to which they pass on ACL policy, bootstrap and global token writes (Nomad's server { authoritative_region }; default: this region)")
	fs.StringVar(&cfg.ReplicationToken, "acl-replication-token", cfg.ReplicationToken, "a management token's secret of the authoritative region, which ACL replication presents (Nomad's acl { replication_token })")
	fs.DurationVar(&cfg.ACLReplicationInterval, "acl-replication-interval", agent.DefaultACLReplicationInterval, "how often the leader pulls the authoritative region's ACLs")
	fs.BoolVar(&cfg.Dev, "dev", false, "run a server and a client in one process with state in a temporary directory")
	server := fs.Bool("server", false, "run a server")
	client := fs.Bool("client", false, "run a client")
	fs.StringVar(&cfg.DataDir, "data-dir", cfg.DataDir, "directory for raft, the client state and allocation directories")
	fs.StringVar(&cfg.HTTPAddr, "http-addr", cfg.HTTPAddr, "address of the HTTP API")
	fs.StringVar(&cfg.NodeName, "node", cfg.NodeName, "node name (default: the hostname)")
	fs.StringVar(&cfg.Datacenter, "dc", cfg.Datacenter, "datacenter")
	fs.StringVar(&cfg.Region, "region", cfg.Region, "region")
	fs.StringVar(&cfg.NodeClass, "node-class", "", "node class")
	fs.StringVar(&cfg.NodePool, "node-pool", "default", "node pool of the client (created when it does not exist)")
	fs.StringVar(&cfg.BindAddr, "bind", cfg.BindAddr, "address the RPC (4647), gossip (4648) and raft (4649) listeners bind; enables cluster mode")
	fs.IntVar(&cfg.BootstrapExpect, "bootstrap-expect", cfg.BootstrapExpect, "servers to wait for before bootstrapping raft")
	var join, servers, retryJoin listFlag
	fs.Var(&join, "join", "gossip address of an agent to join (repeatable, or comma-separated)")
	fs.Var(&retryJoin, "retry-join", "WAN address (host or host:port) of a server, of this region or another, whose WAN pool this server joins, retrying until it answers (repeatable, or comma-separated)")
	fs.IntVar(&cfg.WANPort, "wan-port", cfg.WANPort, "the servers' WAN pool port, which joins the regions (federation; 0: any free port)")
	fs.Var(&servers, "servers", "RPC addresses of the servers, comma-separated (clients)")
	fs.IntVar(&cfg.RPCPort, "rpc-port", cfg.RPCPort, "RPC (gRPC actor transport) port")
	fs.IntVar(&cfg.GossipPort, "gossip-port", cfg.GossipPort, "gossip (memberlist) port")
	fs.IntVar(&cfg.RaftPort, "raft-port", cfg.RaftPort, "raft port")
	fs.DurationVar(&cfg.HeartbeatTTL, "heartbeat-ttl", cfg.HeartbeatTTL, "the least heartbeat TTL handed to clients")
	fs.DurationVar(&cfg.HeartbeatGrace, "heartbeat-grace", cfg.HeartbeatGrace, "extra time past a TTL before a node counts as missed")
	fs.Float64Var(&cfg.MaxHeartbeatsPerSecond, "max-heartbeats-per-second", cfg.MaxHeartbeatsPerSecond, "the leader's heartbeat budget: TTLs grow with the cluster to stay under it")
	fs.StringVar(&cfg.GossipKey, "encrypt", cfg.GossipKey, "gossip encryption key: base64 of 16, 24 or 32 bytes, the same on every agent (troupe operator gossip keyring -generate)")
	fs.DurationVar(&cfg.GossipInterval, "gossip-interval", 0, "gossip and probe interval (0: memberlist's LAN defaults)")
	fs.DurationVar(&cfg.RaftTimeout, "raft-timeout", 0, "raft heartbeat and election timeout (0: 1s)")
	fs.DurationVar(&cfg.RPCHoldTimeout, "rpc-hold-timeout", agent.DefaultRPCHoldTimeout, "how long a consistent read or a write waits for a cluster leader before it fails")
	fs.Uint64Var(&cfg.SnapshotThreshold, "raft-snapshot-threshold", cfg.SnapshotThreshold, "raft log entries between snapshots")
	fs.DurationVar(&cfg.SnapshotInterval, "raft-snapshot-interval", cfg.SnapshotInterval, "how often raft checks whether to snapshot")
	fs.StringVar(&cfg.ContainerdAddress, "containerd-address", "", "containerd socket for the containerd driver (default /run/containerd/containerd.sock)")
	fs.StringVar(&cfg.BridgeName, "bridge", "", "bridge of allocations' bridge networks (default troupe0)")
	fs.StringVar(&cfg.BridgeSubnet, "bridge-subnet", "", "subnet of the bridge network (default 172.26.64.0/20)")
	fs.DurationVar(&cfg.PluginProbeInterval, "plugin-probe-interval", cfg.PluginProbeInterval, "how often CSI plugin tasks are fingerprinted (0: 10s)")
	fs.DurationVar(&cfg.NetworkGCInterval, "network-gc-interval", cfg.NetworkGCInterval, "how often the bridge network is swept for what gone allocations left (0: 5m)")
	fs.StringVar(&cfg.CNINetwork, "cni-network", "", "name of the CNI network of bridge-mode allocations (default troupe)")
	fs.StringVar(&cfg.CNIStateDir, "cni-state-dir", "", "host-local IPAM state directory, on tmpfs so a reboot wipes it (default /var/run/cni)")
	fs.StringVar(&cfg.NetnsDir, "netns-dir", "", "where allocations' network namespaces are pinned (default /var/run/netns)")
	fs.IntVar(&cfg.JobLimits.JobMaxCount, "job-max-count", jobspec.DefaultJobMaxCount, "most allocations one job may ask for: the sum of its groups' counts (Nomad's job_max_count)")
	fs.IntVar(&cfg.JobLimits.MaxNameLength, "job-max-name-length", jobspec.DefaultMaxNameLength, "longest job ID, job, group, task or volume name")
	fs.IntVar(&cfg.JobLimits.MaxMetaValueLength, "job-max-meta-value", jobspec.DefaultMaxMetaValueLength, "longest value in a job's meta or env, in bytes")
	fs.IntVar(&cfg.MaxPlacementsPerEval, "max-placements-per-eval", 0, "most allocations one scheduler plan places; a larger job is placed in several plans (0: no bound)")
	fs.IntVar(&cfg.JobVersions, "job-tracked-versions", state.DefaultJobVersions, "versions of each job the servers keep (the same on every server); the garbage collector trims jobs that keep more")
	fs.DurationVar(&cfg.GC.EvalThreshold, "eval-gc-threshold", time.Hour, "age of a terminal evaluation before it is collected (Nomad's eval_gc_threshold)")
	fs.DurationVar(&cfg.GC.JobThreshold, "job-gc-threshold", 4*time.Hour, "age of a dead job before it is collected (Nomad's job_gc_threshold)")
	fs.DurationVar(&cfg.GC.NodeThreshold, "node-gc-threshold", 24*time.Hour, "how long a node is down before it is collected (Nomad's node_gc_threshold)")
	fs.DurationVar(&cfg.GC.Interval, "job-gc-interval", 5*time.Minute, "how often the leader collects garbage (Nomad's job_gc_interval)")
	var qemuImages listFlag
	fs.Var(&qemuImages, "qemu-image-path", "host directory where a qemu task's absolute image_path may be besides its allocation dir (repeatable, or comma-separated; Nomad's image_paths)")
	deny := exec.DefaultUserDenylist
	if cfg.UserDenylist != nil { // from a config file
		deny = cfg.UserDenylist
	}
	denylist := fs.String("user-denylist", strings.Join(deny, ","),
		"comma-separated users exec tasks may not run as (Nomad's user.denylist; \"\" for none)")
	fs.Func("host-volume", "a host directory groups may mount: name=/path, or name=/path:ro read-only (repeatable; Nomad's client host_volume)", cfg.AddHostVolume)
	fs.BoolVar(&cfg.RawExecEnabled, "raw-exec", cfg.RawExecEnabled, "enable the raw_exec driver: its tasks run unisolated, as the agent's user (on in -dev)")
	fs.StringVar(&cfg.CgroupParent, "cgroup-parent", "", "cgroup below which exec, raw_exec, java and qemu tasks get theirs (Nomad's cgroup_parent; default /troupe, /troupe.slice on cgroup v2); the client owns it: give each client on a host its own")
	fs.StringVar(&cfg.JavaHome, "java-home", "", "the java driver's JVM home (its bin/java runs the tasks; default: java on PATH)")
	cniPath := fs.String("cni-path", "", "colon-separated directories of CNI plugins (default /usr/lib/cni)")
	reservedCores := fs.String("reserved-cores", "", "cores the client keeps for the host, never reserved for tasks, as a CPU list such as 0-1 (Nomad's client reserved { cores })")
	telemetryFlags(fs, &cfg.Telemetry, &cfg.EventBufferSize)
	level := fs.String("log-level", "info", "log level: debug, info, warn, error")
	jsonLogs := fs.Bool("log-json", false, "log as JSON")
	cpuProfile := fs.String("cpuprofile", "", "write a CPU profile of the agent's whole run to this file")
	tlsFlagsOf(fs, &cfg.TLS)
	if err := fs.Parse(args); err != nil {
		return nil, nil, err
	}
	if *server || *client {
		cfg.Server, cfg.Client = *server, *client
	}
	cfg.Join = join
	if len(retryJoin) > 0 {
		cfg.RetryJoin = retryJoin
	}
	if len(servers) > 0 {
		cfg.Servers = servers
	}
	cfg.QemuImagePaths = qemuImages
	cfg.UserDenylist = splitList(*denylist)
	if *cniPath != "" {
		cfg.CNIPluginDirs = strings.Split(*cniPath, ":")
	}
	cores, err := node.ParseCores(*reservedCores)
	if err != nil {
		fmt.Fprintln(stderr, "Error: -reserved-cores:", err)
		return nil, nil, err
	}
	cfg.ReservedCores = cores
	httpSet := false
	fs.Visit(func(f *flag.Flag) { httpSet = httpSet || f.Name == "http-addr" })
	if cfg.BindAddr != "" && !httpSet {
		cfg.HTTPAddr = net.JoinHostPort(cfg.BindAddr, "4646")
	}
	return cfg, &agentRun{cpuProfile: *cpuProfile, level: *level, jsonLogs: *jsonLogs}, nil
}

func runAgent(args []string, stderr io.Writer) int {
	cfg, run, err := parseAgentArgs(args, stderr)
	if err != nil {
		return 1
	}
	if run.cpuProfile != "" {
		stop, err := startCPUProfile(run.cpuProfile)
		if err != nil {
			fmt.Fprintln(stderr, "Error:", err)
			return 1
		}
		defer stop()
	}
	logger, err := newLogger(stderr, run.level, run.jsonLogs)
	if err != nil {
		fmt.Fprintln(stderr, "Error:", err)
		return 1
	}
	cfg.Logger = logger
	if exe, err := os.Executable(); err == nil {
		cfg.ExecutorPath = exe
	}
	a, err := agent.New(cfg)
	if err != nil {
		fmt.Fprintln(stderr, "Error starting agent:", err)
		return 1
	}
	if err := a.Start(); err != nil {
		fmt.Fprintln(stderr, "Error starting agent:", err)
		return 1
	}
	if cfg.Server && !cfg.Clustered() {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		if err := a.WaitLeader(ctx); err != nil {
			logger.Warn("no raft leader yet", "error", err)
		}
		cancel()
	}
	logger.Info("troupe agent started", "http", a.HTTPAddr(), "data_dir", a.DataDir(), "dev", cfg.Dev)
	sigs := make(chan os.Signal, 1)
	signal.Notify(sigs, syscall.SIGINT, syscall.SIGTERM, syscall.SIGHUP)
	sig := <-sigs
	for sig == syscall.SIGHUP && cfg.TLS.Enabled() { // SIGHUP reloads the certificates, as Nomad's does
		if err := a.ReloadTLS(); err != nil {
			logger.Error("tls reload failed; the old certificates stay", "error", err)
		}
		sig = <-sigs
	}
	logger.Info("shutting down (a second signal exits at once)", "signal", sig.String())
	done := make(chan error, 1)
	go func() { done <- a.Shutdown() }()
	select {
	case err := <-done:
		if err != nil {
			logger.Warn("shutdown", "error", err)
		}
		return 0
	case sig := <-sigs:
		logger.Warn("exiting without a clean shutdown", "signal", sig.String())
		return 1
	}
}

// listFlag collects repeated or comma-separated values.
type listFlag []string

func (l *listFlag) String() string { return strings.Join(*l, ",") }

func (l *listFlag) Set(v string) error {
	for _, s := range strings.Split(v, ",") {
		if s = strings.TrimSpace(s); s != "" {
			*l = append(*l, s)
		}
	}
	return nil
}

func newLogger(w io.Writer, level string, asJSON bool) (*slog.Logger, error) {
	var l slog.Level
	if err := l.UnmarshalText([]byte(strings.ToUpper(level))); err != nil {
		return nil, fmt.Errorf("invalid -log-level %q", level)
	}
	opts := &slog.HandlerOptions{Level: l}
	if asJSON {
		return slog.New(slog.NewJSONHandler(w, opts)), nil
	}
	return slog.New(slog.NewTextHandler(w, opts)), nil
}

// splitList splits a comma-separated flag ("" is an empty list).
func splitList(s string) []string {
	out := []string{}
	for _, e := range strings.Split(s, ",") {
		if e = strings.TrimSpace(e); e != "" {
			out = append(out, e)
		}
	}
	return out
}
