package main

import (
	"fmt"
	"time"

	"github.com/troupe-dev/troupe/agent"
)

// aclBlock is Nomad's acl { }.
type aclBlock struct {
	Enabled          *bool   `hcl:"enabled"`
	TokenTTL         *string `hcl:"token_ttl"`
	ReplicationToken *string `hcl:"replication_token"`
}

func (b *aclBlock) apply(cfg *agent.Config) error {
	if b == nil {
		return nil
	}
	set(&cfg.ACLEnabled, b.Enabled)
	set(&cfg.ReplicationToken, b.ReplicationToken)
	if b.TokenTTL != nil {
		d, err := time.ParseDuration(*b.TokenTTL)
		if err != nil || d <= 0 {
			return fmt.Errorf("acl: token_ttl %q is not a positive duration such as \"30s\"", *b.TokenTTL)
		}
		cfg.ACLTokenTTL = d
	}
	return nil
}

// telemetryBlock is Nomad's telemetry { }.
type telemetryBlock struct {
	PrometheusMetrics  *bool   `hcl:"prometheus_metrics"`
	CollectionInterval *string `hcl:"collection_interval"`
	DisableHostname    *bool   `hcl:"disable_hostname"`
}

func (b *telemetryBlock) apply(cfg *agent.Config) error {
	if b == nil {
		return nil
	}
	t := &cfg.Telemetry
	set(&t.Prometheus, b.PrometheusMetrics)
	set(&t.DisableHostname, b.DisableHostname)
	if b.CollectionInterval != nil {
		d, err := time.ParseDuration(*b.CollectionInterval)
		if err != nil || d <= 0 {
			return fmt.Errorf("telemetry: collection_interval %q is not a positive duration such as \"1s\"", *b.CollectionInterval)
		}
		t.Interval = d
	}
	return nil
}
