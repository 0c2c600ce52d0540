package main

import (
	"fmt"
	"strings"

	"github.com/hashicorp/hcl/v2"
	"github.com/hashicorp/hcl/v2/gohcl"
	"github.com/hashicorp/hcl/v2/hclparse"

	"github.com/troupe-dev/troupe/agent"
)

// agentFile is the agent config file (`troupe agent -config FILE`), as
// Nomad's agent configuration: the top-level attributes and one field per
// block. An attribute or block it does not list is an error naming it.
// To add a block (acl, telemetry): a field here, a type with an apply
// method, and a line in apply.
type agentFile struct {
	Region     *string `hcl:"region"`
	Datacenter *string `hcl:"datacenter"`
	DataDir    *string `hcl:"data_dir"`
	BindAddr   *string `hcl:"bind_addr"`
	Name       *string `hcl:"name"`

	Server    *serverBlock    `hcl:"server,block"`
	Client    *clientBlock    `hcl:"client,block"`
	TLS       *tlsBlock       `hcl:"tls,block"`
	ACL       *aclBlock       `hcl:"acl,block"`
	Telemetry *telemetryBlock `hcl:"telemetry,block"`
	Plugins   []pluginBlock   `hcl:"plugin,block"`
}

// serverBlock is Nomad's server { }.
type serverBlock struct {
	Enabled         *bool   `hcl:"enabled"`
	BootstrapExpect *int    `hcl:"bootstrap_expect"`
	Encrypt         *string `hcl:"encrypt"`
	// RetryJoin are WAN addresses of servers to join (federation).
	RetryJoin *[]string `hcl:"retry_join"`
	// AuthoritativeRegion is the region ACLs replicate from.
	AuthoritativeRegion *string `hcl:"authoritative_region"`
}

// clientBlock is Nomad's client { }.
type clientBlock struct {
	Enabled *bool     `hcl:"enabled"`
	Servers *[]string `hcl:"servers"`
	// ChrootEnv is Nomad's chroot_env, host path = path in the task; HCL2
	// writes it as an object (chroot_env = { "/usr" = "/usr" }).
	ChrootEnv *map[string]string `hcl:"chroot_env"`
	User      *userBlock         `hcl:"user,block"`
}

// tlsBlock is Nomad's tls { }.
type tlsBlock struct {
	HTTP                 *bool   `hcl:"http"`
	RPC                  *bool   `hcl:"rpc"`
	CAFile               *string `hcl:"ca_file"`
	CertFile             *string `hcl:"cert_file"`
	KeyFile              *string `hcl:"key_file"`
	VerifyServerHostname *bool   `hcl:"verify_server_hostname"`
	VerifyHTTPSClient    *bool   `hcl:"verify_https_client"`
}

// set copies v into dst when the file gave it.
func set[T any](dst *T, v *T) {
	if v != nil {
		*dst = *v
	}
}

func (f *agentFile) apply(cfg *agent.Config) {
	set(&cfg.Region, f.Region)
	set(&cfg.Datacenter, f.Datacenter)
	set(&cfg.DataDir, f.DataDir)
	set(&cfg.BindAddr, f.BindAddr)
	set(&cfg.NodeName, f.Name)
	if f.Server != nil || f.Client != nil { // the file says which roles run: the others do not
		cfg.Server, cfg.Client = f.Server.enabled(), f.Client.enabled()
	}
	f.Server.apply(cfg)
	f.Client.apply(cfg)
	f.TLS.apply(cfg)
}

func (b *serverBlock) enabled() bool { return b != nil && b.Enabled != nil && *b.Enabled }

func (b *serverBlock) apply(cfg *agent.Config) {
	if b == nil {
		return
	}
	set(&cfg.BootstrapExpect, b.BootstrapExpect)
	set(&cfg.GossipKey, b.Encrypt)
	set(&cfg.RetryJoin, b.RetryJoin)
	set(&cfg.AuthoritativeRegion, b.AuthoritativeRegion)
}

func (b *clientBlock) enabled() bool { return b != nil && b.Enabled != nil && *b.Enabled }

func (b *clientBlock) apply(cfg *agent.Config) {
	if b == nil {
		return
	}
	set(&cfg.Servers, b.Servers)
	set(&cfg.ChrootEnv, b.ChrootEnv)
	if b.User != nil {
		set(&cfg.UserDenylist, b.User.Denylist)
	}
}

// userBlock is Nomad's client { user { denylist } }.
type userBlock struct {
	Denylist *[]string `hcl:"denylist"`
}

// pluginBlock is Nomad's plugin "NAME" { config { } }: only raw_exec's
// enabled is taken; another plugin, or another setting, is an error
// naming it.
type pluginBlock struct {
	Name   string        `hcl:"name,label"`
	Config *pluginConfig `hcl:"config,block"`
}

type pluginConfig struct {
	Enabled *bool `hcl:"enabled"`
}

func (b pluginBlock) apply(cfg *agent.Config) error {
	if b.Name != "raw_exec" {
		return fmt.Errorf("plugin %q: not supported (only plugin \"raw_exec\" { config { enabled } } is)", b.Name)
	}
	if b.Config != nil {
		set(&cfg.RawExecEnabled, b.Config.Enabled)
	}
	return nil
}

func (b *tlsBlock) apply(cfg *agent.Config) {
	if b == nil {
		return
	}
	t := &cfg.TLS
	set(&t.HTTP, b.HTTP)
	set(&t.RPC, b.RPC)
	set(&t.CAFile, b.CAFile)
	set(&t.CertFile, b.CertFile)
	set(&t.KeyFile, b.KeyFile)
	set(&t.VerifyServerHostname, b.VerifyServerHostname)
	set(&t.VerifyHTTPSClient, b.VerifyHTTPSClient)
}

// loadAgentFiles applies the config files to cfg in order (a later file
// overrides an earlier one).
func loadAgentFiles(cfg *agent.Config, paths []string) error {
	p := hclparse.NewParser()
	for _, path := range paths {
		f, diags := p.ParseHCLFile(path)
		if diags.HasErrors() {
			return fmt.Errorf("config file %s: %w", path, diags)
		}
		var af agentFile
		if diags := gohcl.DecodeBody(f.Body, nil, &af); diags.HasErrors() {
			return fmt.Errorf("config file %s: %w", path, hcl.Diagnostics(diags))
		}
		af.apply(cfg)
		blocks := []interface{ apply(*agent.Config) error }{af.ACL, af.Telemetry}
		for _, p := range af.Plugins {
			blocks = append(blocks, p)
		}
		for _, b := range blocks {
			if err := b.apply(cfg); err != nil {
				return fmt.Errorf("config file %s: %w", path, err)
			}
		}
	}
	return nil
}

// configPaths finds the -config values among the agent's arguments, so
// that the files are read before the flags, which override them.
func configPaths(args []string) []string {
	var out []string
	for i := 0; i < len(args); i++ {
		a := args[i]
		if a == "--" || !strings.HasPrefix(a, "-") {
			break
		}
		name, v, hasV := strings.Cut(strings.TrimLeft(a, "-"), "=")
		if name != "config" {
			continue
		}
		if !hasV && i+1 < len(args) {
			i++
			v = args[i]
		}
		out = append(out, v)
	}
	return out
}
