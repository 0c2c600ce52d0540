package agent

import (
	"context"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/troupe-dev/troupe/acl"
	"github.com/troupe-dev/troupe/cluster/remote"
)

// TestRPCGuardTable: every kind of sender against the messages it may and
// may not send, with ACLs on (tokens "mgmt", "agent-reader", "nothing")
// and off.
func TestRPCGuardTable(t *testing.T) {
	reader, err := acl.Parse(`agent { policy = "read" }`)
	require.NoError(t, err)
	tokens := map[string]*acl.ACL{"mgmt": acl.Management, "agent-reader": acl.Compile(reader), "": acl.Compile(), "nothing": acl.Compile()}
	on := rpcGuard{resolve: func(_ context.Context, secret string) (*acl.ACL, error) {
		if a, ok := tokens[secret]; ok {
			return a, nil
		}
		return nil, ErrTokenDenied
	}}
	off := rpcGuard{}
	tests := []struct {
		name      string
		in        remote.Inbound
		on, off   bool // allowed with ACLs on, off
		roleError bool
	}{
		{"a server forwards a write", remote.Inbound{Role: "server", Target: "server", Type: "troupe.ApplyRequest"}, true, true, false},
		{"a server pushes allocations", remote.Inbound{Role: "server", Target: "client", Type: "troupe.SetClientAllocs"}, true, true, false},
		{"a client heartbeats", remote.Inbound{Role: "client", Target: "server", Type: "troupe.NodeHeartbeat"}, true, true, false},
		{"a client resolves a token", remote.Inbound{Role: "client", Target: "server", Type: "troupe.ResolveACLTokenRequest"}, true, true, false},
		{"a client checks a workload identity", remote.Inbound{Role: "client", Target: "server", Type: "troupe.ResolveWorkloadIdentityRequest"}, true, true, false},
		{"a client answers a request", remote.Inbound{Role: "client", Target: "future$1f", Type: "troupe.ControllerResponse"}, true, true, false},
		{"a client watches", remote.Inbound{Role: "client", Target: "nodes/n1", Type: "actor.Watch"}, true, true, false},
		{"a client forges a raft write", remote.Inbound{Role: "client", Target: "server", Type: "troupe.ApplyRequest"}, false, false, true},
		{"a client forges an alloc push", remote.Inbound{Role: "client", Target: "client", Type: "troupe.SetClientAllocs"}, false, false, true},
		{"a client heartbeats the scheduler", remote.Inbound{Role: "client", Target: "scheduler", Type: "troupe.NodeHeartbeat"}, false, false, true},
		{"a client stops an actor", remote.Inbound{Role: "client", Target: "scheduler", Type: "actor.PoisonPill"}, false, false, true},
		{"a client's user reads the tree", remote.Inbound{Role: "client", Target: "agent", Type: "troupe.GetActorTree", Token: "agent-reader"}, true, true, false},
		{"a client's user with a denied token", remote.Inbound{Role: "client", Target: "agent", Type: "troupe.GetActorTree", Token: "nothing"}, false, true, false},
		{"a client's user without a token", remote.Inbound{Role: "client", Target: "agent", Type: "troupe.GetActorTree"}, false, true, false},
		{"a client's management user writes", remote.Inbound{Role: "client", Target: "server", Type: "troupe.ApplyRequest", Token: "mgmt"}, true, true, false},
		{"a client's reader writes", remote.Inbound{Role: "client", Target: "server", Type: "troupe.ApplyRequest", Token: "agent-reader"}, false, true, false},
		{"a CLI reads the tree", remote.Inbound{Role: "cli", Target: "agent", Type: "troupe.GetActorTree", Token: "agent-reader"}, true, true, false},
		{"a CLI heartbeats", remote.Inbound{Role: "cli", Target: "server", Type: "troupe.NodeHeartbeat", Token: "agent-reader"}, false, true, false},
		{"a CLI with an unknown token", remote.Inbound{Role: "cli", Target: "agent", Type: "troupe.GetActorTree", Token: "stolen"}, false, true, false},
		{"plain transport, no token", remote.Inbound{Target: "server", Type: "troupe.ApplyRequest"}, true, true, false},
		{"plain transport, a denied token", remote.Inbound{Target: "agent", Type: "troupe.GetActorTree", Token: "nothing"}, false, true, false},
	}
	ctx := context.Background()
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			for _, c := range []struct {
				g    rpcGuard
				want bool
			}{{on, tt.on}, {off, tt.off}} {
				err := c.g.check(ctx, tt.in)
				if c.want {
					require.NoError(t, err)
					continue
				}
				require.Error(t, err)
				if tt.roleError {
					require.ErrorIs(t, err, ErrRoleDenied)
				} else {
					require.ErrorIs(t, err, ErrTokenDenied)
				}
			}
		})
	}
}

// TestRPCGuardOtherRegionServer: with verify_server_hostname (the guard
// knows its region), a server of another region may open tunnels, pull
// ACLs, query a multiregion deployment and answer requests, and nothing
// else; without it (region ""), server certificates are not told apart.
func TestRPCGuardOtherRegionServer(t *testing.T) {
	eu := rpcGuard{region: "eu"}
	all := rpcGuard{}
	tests := []struct {
		name string
		in   remote.Inbound
		want bool // allowed by eu
	}{
		{"this region's server forwards a write", remote.Inbound{Role: "server", Region: "eu", Target: "server", Type: "troupe.ApplyRequest"}, true},
		{"this region's server pushes allocations", remote.Inbound{Role: "server", Region: "eu", Target: "client", Type: "troupe.SetClientAllocs"}, true},
		{"another region's server opens a tunnel", remote.Inbound{Role: "server", Region: "us", Target: "federation", Type: "troupe.OpenTunnel"}, true},
		{"another region's server sends a tunnel's bytes", remote.Inbound{Role: "server", Region: "us", Target: "federation/$4", Type: "troupe.TunnelData"}, true},
		{"another region's server pulls ACLs", remote.Inbound{Role: "server", Region: "us", Target: "agent", Type: "troupe.ReplicateACLs"}, true},
		{"another region's server asks a deployment", remote.Inbound{Role: "server", Region: "us", Target: "agent", Type: "troupe.MultiregionDeploymentQuery"}, true},
		{"another region's server answers", remote.Inbound{Role: "server", Region: "us", Target: "future$2a", Type: "troupe.OpenTunnelResponse"}, true},
		{"another region's server watches", remote.Inbound{Role: "server", Region: "us", Target: "federation/$4", Type: "actor.Watch"}, true},
		{"another region's server forges a raft write", remote.Inbound{Role: "server", Region: "us", Target: "server", Type: "troupe.ApplyRequest"}, false},
		{"another region's server pushes allocations", remote.Inbound{Role: "server", Region: "us", Target: "client", Type: "troupe.SetClientAllocs"}, false},
		{"another region's server heartbeats", remote.Inbound{Role: "server", Region: "us", Target: "server", Type: "troupe.NodeHeartbeat"}, false},
		{"another region's server stops an actor", remote.Inbound{Role: "server", Region: "us", Target: "scheduler", Type: "actor.PoisonPill"}, false},
	}
	ctx := context.Background()
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			require.NoError(t, all.check(ctx, tt.in), "without verify_server_hostname every server is trusted")
			err := eu.check(ctx, tt.in)
			if tt.want {
				require.NoError(t, err)
				return
			}
			require.ErrorIs(t, err, ErrRoleDenied)
			require.ErrorContains(t, err, `region "us"`)
		})
	}
}
