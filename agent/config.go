package agent

import (
	"fmt"
	"log/slog"
	"time"
)

// Config is an agent's configuration.
type Config struct {
	Dev        bool
	Server     bool
	Client     bool
	DataDir    string
	HTTPAddr   string
	NodeName   string
	Datacenter string
	Region     string
	NodeClass  string
	Meta       map[string]string
	// ExecutorPath is the binary the exec driver runs as its executor
	// (troupe itself); ExecutorArgs its leading arguments.
	ExecutorPath string
	ExecutorArgs []string
	ExecutorEnv  []string
	// Raft snapshot tuning.
	SnapshotThreshold uint64
	SnapshotInterval  time.Duration
	// ClientBatch is how long a client gathers alloc updates.
	ClientBatch time.Duration
	Logger      *slog.Logger
}

// DefaultConfig returns Nomad's defaults.
func DefaultConfig() *Config {
	return &Config{
		Server: true, Client: true,
		HTTPAddr: "127.0.0.1:4646", Datacenter: "dc1", Region: "global",
		SnapshotThreshold: 8192, SnapshotInterval: 2 * time.Minute,
		ClientBatch: 50 * time.Millisecond,
	}
}

// Validate checks the configuration.
func (c *Config) Validate() error {
	switch {
	case !c.Server && !c.Client:
		return fmt.Errorf("%w: neither server nor client enabled", ErrConfig)
	case c.DataDir == "" && !c.Dev:
		return fmt.Errorf("%w: -data-dir is required unless -dev", ErrConfig)
	case c.Client && !c.Server:
		return fmt.Errorf("%w: client-only agents join a cluster (not yet supported)", ErrConfig)
	}
	return nil
}
