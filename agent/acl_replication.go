package agent

import (
	"context"
	"errors"
	"slices"
	"time"

	"google.golang.org/protobuf/proto"

	"github.com/troupe-dev/troupe/cluster/remote"
	"github.com/troupe-dev/troupe/cluster/state"
	"github.com/troupe-dev/troupe/messages"
)

// ACL replication (federation): with ACLs on, one region is
// authoritative (Config.AuthoritativeRegion). The leader of every other
// region pulls the authoritative region's policies and global tokens
// through one of its servers (the "agent" actor answers ReplicateACLs)
// every ACLReplicationInterval, and commits through raft what differs;
// local tokens stay in their region. A region cut off keeps what it had
// and catches up at the first pull after the link returns. The writes the
// pull would undo (policies, the bootstrap, global tokens) are passed on
// to the authoritative region by the API of any other region's server
// (httpapi/acl_authority.go; Options.AuthoritativeRegion, set in http.go).

// DefaultACLReplicationInterval is Config.ACLReplicationInterval's default.
const DefaultACLReplicationInterval = 5 * time.Second

// replicatesACLs says whether this server's region pulls ACLs from another.
func (a *Agent) replicatesACLs() bool {
	r := a.cfg.AuthoritativeRegion
	return a.cfg.Server && a.cfg.ACLEnabled && r != "" && r != a.cfg.Region
}

// aclReplicationInterval is how often the leader pulls.
func (a *Agent) aclReplicationInterval() time.Duration {
	if d := a.cfg.ACLReplicationInterval; d > 0 {
		return d
	}
	return DefaultACLReplicationInterval
}

// replicateACLsTick pulls the authoritative region's ACLs when this
// server leads (run by everyUntilStop).
func (a *Agent) replicateACLsTick() {
	if !a.raft.IsLeader() {
		return
	}
	ctx, cancel := a.tickContext(a.aclReplicationInterval() + regionOpenTimeout)
	defer cancel()
	if err := a.replicateACLsOnce(ctx); err != nil {
		a.log.Warn("ACL replication from the authoritative region failed; retrying", "region", a.cfg.AuthoritativeRegion, "error", err)
	}
}

// tickContext bounds one periodic tick's work by d and by the agent's
// stop.
func (a *Agent) tickContext(d time.Duration) (context.Context, context.CancelFunc) {
	ctx, cancel := context.WithTimeout(context.Background(), d)
	go func() {
		select {
		case <-a.stop:
			cancel()
		case <-ctx.Done():
		}
	}()
	return ctx, cancel
}

// replicateACLsOnce pulls once and commits the differences.
func (a *Agent) replicateACLsOnce(ctx context.Context) error {
	servers := a.regionServers(a.cfg.AuthoritativeRegion)
	if len(servers) == 0 {
		return errNoAuthoritative
	}
	var errs []error
	for _, s := range servers {
		rctx, cancel := context.WithTimeout(ctx, regionOpenTimeout)
		resp, err := remote.Request[*messages.ReplicateACLsResponse](rctx, a.sys.Root, s.Meta.RPCAddr, "agent",
			&messages.ReplicateACLs{ReplicationToken: a.cfg.ReplicationToken})
		cancel()
		if err != nil {
			errs = append(errs, err)
			continue
		}
		for _, cmd := range aclReplicationPlan(a.store.Snapshot(), resp) {
			if _, _, err := a.Apply(ctx, cmd); err != nil {
				return err
			}
		}
		return nil
	}
	return errors.Join(errs...)
}

var errNoAuthoritative = errors.New("agent: no server of the authoritative region is known")

// answerReplicateACLs is the authoritative region's answer: its policies
// and global tokens, to a management token's holder.
func (a *Agent) answerReplicateACLs(m *messages.ReplicateACLs) *messages.ReplicateACLsResponse {
	refuse := func(code messages.ErrorCode, msg string) *messages.ReplicateACLsResponse {
		return &messages.ReplicateACLsResponse{Error: &messages.Error{Code: string(code), Message: msg}}
	}
	switch {
	case a.store == nil || !a.cfg.ACLEnabled:
		return refuse(messages.CodeInvalid, "ACLs are not enabled on this server")
	case a.cfg.AuthoritativeRegion != "" && a.cfg.AuthoritativeRegion != a.cfg.Region:
		return refuse(messages.CodeInvalid, "region "+a.cfg.Region+" is not the authoritative region")
	}
	snap := a.store.Snapshot()
	t := snap.ACLTokenBySecret(m.GetReplicationToken())
	if t == nil || t.GetType() != state.ACLTokenManagement {
		return refuse(messages.CodeInvalid, "the replication token is not a management token of region "+a.cfg.Region)
	}
	out := &messages.ReplicateACLsResponse{Policies: snap.ACLPolicies(), Index: snap.Index()}
	for _, tok := range snap.ACLTokens() {
		if tok.GetGlobal() {
			out.Tokens = append(out.Tokens, tok)
		}
	}
	return out
}

// aclReplicationPlan is what makes the local policies and global tokens
// those of the authoritative region: upserts of the policies, then of the
// tokens, that are new or differ, then deletions of the tokens, then of
// the policies, that are gone. Local tokens are left alone. Pure.
func aclReplicationPlan(local *state.Snap, remote *messages.ReplicateACLsResponse) []*messages.Command {
	var out []*messages.Command
	var policies []*messages.ACLPolicy
	wantPolicy := map[string]bool{}
	for _, p := range remote.GetPolicies() {
		wantPolicy[p.GetName()] = true
		if old := local.ACLPolicyByName(p.GetName()); old == nil || old.GetRules() != p.GetRules() || old.GetDescription() != p.GetDescription() {
			policies = append(policies, &messages.ACLPolicy{Name: p.GetName(), Description: p.GetDescription(), Rules: p.GetRules()})
		}
	}
	if len(policies) > 0 {
		out = append(out, &messages.Command{Cmd: &messages.Command_UpsertACLPolicies{UpsertACLPolicies: &messages.UpsertACLPolicies{Policies: policies}}})
	}
	var tokens []*messages.ACLToken
	wantToken := map[string]bool{}
	for _, t := range remote.GetTokens() {
		wantToken[t.GetAccessorID()] = true
		if old := local.ACLTokenByAccessor(t.GetAccessorID()); old == nil || !sameToken(old, t) {
			c := proto.Clone(t).(*messages.ACLToken)
			c.CreateIndex, c.ModifyIndex = 0, 0
			tokens = append(tokens, c)
		}
	}
	if len(tokens) > 0 {
		out = append(out, &messages.Command{Cmd: &messages.Command_UpsertACLTokens{UpsertACLTokens: &messages.UpsertACLTokens{Tokens: tokens}}})
	}
	var goneTokens, gonePolicies []string
	for _, t := range local.ACLTokens() {
		if t.GetGlobal() && !wantToken[t.GetAccessorID()] {
			goneTokens = append(goneTokens, t.GetAccessorID())
		}
	}
	for _, p := range local.ACLPolicies() {
		if !wantPolicy[p.GetName()] {
			gonePolicies = append(gonePolicies, p.GetName())
		}
	}
	if len(goneTokens) > 0 {
		out = append(out, &messages.Command{Cmd: &messages.Command_DeleteACLTokens{DeleteACLTokens: &messages.DeleteACLTokens{AccessorIDs: goneTokens}}})
	}
	if len(gonePolicies) > 0 {
		out = append(out, &messages.Command{Cmd: &messages.Command_DeleteACLPolicies{DeleteACLPolicies: &messages.DeleteACLPolicies{Names: gonePolicies}}})
	}
	return out
}

// sameToken says whether a replicated token needs no update.
func sameToken(a, b *messages.ACLToken) bool {
	return a.GetName() == b.GetName() && a.GetType() == b.GetType() && slices.Equal(a.GetPolicies(), b.GetPolicies()) &&
		string(a.GetSecretHash()) == string(b.GetSecretHash()) && a.GetGlobal() == b.GetGlobal()
}
