package agent

import (
	"context"
	"errors"
	"fmt"

	"github.com/troupe-dev/troupe/acl"
	"github.com/troupe-dev/troupe/cluster/remote"
	"github.com/troupe-dev/troupe/cluster/tlsutil"
)

// The RPC transport checks every inbound message before an actor sees it
// (remote.Guard), by the sender's role, which its TLS certificate names,
// and by the ACL token a user's message carries:
//
//   - a server of this region may send anything (servers trust each
//     other); with verify_server_hostname, a server of another region
//     (its certificate names server.<other>.nomad) may only send what
//     federation needs (federationMessages: tunnels for forwarded
//     requests, the ACL replication pull, the multiregion rollout's
//     query) and answer this agent's requests: no raft write, no client
//     RPC, no alloc push;
//   - a client may answer this agent's requests, send the client RPCs to
//     the "server" actor and protoactor's watch messages; anything else
//     is a user message, checked by its token;
//   - a CLI certificate (an external program) sends user messages only;
//   - on a plain transport, or with certificates that name no role,
//     peers are not identified: messages pass as before, but one that
//     carries a token is checked by it.
//
// A user message needs the capability userMessageNeeds names for its type
// (a management token otherwise), checked with the same resolution and
// policies as the HTTP API's; with ACLs off user messages pass.

// clientRPCs are the messages a client sends a server's "server" actor.
var clientRPCs = map[string]bool{
	"troupe.RegisterNodeRequest":            true,
	"troupe.NodeHeartbeat":                  true,
	"troupe.UpdateAllocsRequest":            true,
	"troupe.UpsertPluginInstances":          true,
	"troupe.VolumeClaimRequest":             true,
	"troupe.VolumeNodeDetachedRequest":      true,
	"troupe.VarReadRequest":                 true,
	"troupe.ResolveACLTokenRequest":         true,
	"troupe.ResolveWorkloadIdentityRequest": true,
}

// federationMessages are what a server of another region sends this
// agent's actors: a forwarded HTTP request's tunnel, which carries its ACL
// token to this region's API, the ACL replication pull (checked by its
// replication token) and the multiregion rollout's deployment query.
var federationMessages = map[string]bool{
	"troupe.OpenTunnel":                 true,
	"troupe.TunnelData":                 true,
	"troupe.TunnelClosed":               true,
	"troupe.TunnelCredit":               true,
	"troupe.TunnelPing":                 true,
	"troupe.ReplicateACLs":              true,
	"troupe.MultiregionDeploymentQuery": true,
}

// watchMessages are protoactor's own, which any peer may send.
var watchMessages = map[string]bool{"actor.Watch": true, "actor.Unwatch": true, "actor.Terminated": true}

// userMessageNeeds is what a user's message needs of its token, by type;
// a type not listed needs a management token.
var userMessageNeeds = map[string]func(*acl.ACL) bool{
	"troupe.GetActorTree": (*acl.ACL).AllowAgentRead,
}

// rpcGuard decides; resolve is nil when ACLs are off. region is this
// agent's region where server certificates name their region
// (verify_server_hostname), "" where they need not.
type rpcGuard struct {
	resolve func(ctx context.Context, secret string) (*acl.ACL, error)
	region  string
}

func (g rpcGuard) check(ctx context.Context, in remote.Inbound) error {
	switch in.Role {
	case tlsutil.RoleServer:
		if g.region == "" || in.Region == g.region || in.IsReply() || watchMessages[in.Type] || federationMessages[in.Type] {
			return nil
		}
		return fmt.Errorf("%w: a server of region %q may not send %s to %q in region %q", ErrRoleDenied, in.Region, in.Type, in.Target, g.region)
	case "":
		if in.Token == "" {
			return nil
		}
		return g.checkUser(ctx, in)
	case tlsutil.RoleClient:
		if in.IsReply() || watchMessages[in.Type] || (in.Target == "server" && clientRPCs[in.Type]) {
			return nil
		}
		if _, user := userMessageNeeds[in.Type]; !user && in.Token == "" {
			return fmt.Errorf("%w: a client may not send %s to %q", ErrRoleDenied, in.Type, in.Target)
		}
		return g.checkUser(ctx, in)
	default: // a CLI's certificate: a user
		if in.IsReply() {
			return nil
		}
		return g.checkUser(ctx, in)
	}
}

// checkUser checks a user's message against its token.
func (g rpcGuard) checkUser(ctx context.Context, in remote.Inbound) error {
	if g.resolve == nil {
		return nil
	}
	a, err := g.resolve(ctx, in.Token)
	if err != nil {
		return fmt.Errorf("%w: %s: %w", ErrTokenDenied, in.Type, err)
	}
	if a == nil {
		return nil
	}
	allows := (*acl.ACL).IsManagement
	if need, ok := userMessageNeeds[in.Type]; ok {
		allows = need
	}
	if !allows(a) {
		return fmt.Errorf("%w: the token may not send %s", ErrTokenDenied, in.Type)
	}
	return nil
}

// guardRPC is the transport's remote.Guard.
func (a *Agent) guardRPC(ctx context.Context, in remote.Inbound) error {
	g := rpcGuard{}
	if a.cfg.TLS.RPC && a.cfg.TLS.VerifyServerHostname {
		g.region = a.cfg.Region
	}
	if a.cfg.ACLEnabled {
		g.resolve = a.resolveRPCToken
	}
	return g.check(ctx, in)
}

// resolveRPCToken resolves a token through the HTTP API's resolver; it
// fails closed before the API runs.
func (a *Agent) resolveRPCToken(ctx context.Context, secret string) (*acl.ACL, error) {
	srv := a.api.Load()
	if srv == nil {
		return nil, errors.New("the agent's ACL resolver is not running yet")
	}
	return srv.ResolveACL(ctx, secret)
}
