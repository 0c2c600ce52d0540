package agent

import (
	"context"
	"fmt"
	"time"

	"github.com/troupe-dev/troupe/acl"
	"github.com/troupe-dev/troupe/cluster/identity"
	"github.com/troupe-dev/troupe/cluster/keyring"
	"github.com/troupe-dev/troupe/cluster/state"
	"github.com/troupe-dev/troupe/httpapi"
	"github.com/troupe-dev/troupe/messages"
)

// Workload identities, on the servers: signIdentities signs, for a
// client, the identities of the tasks of an allocation placed on it;
// readVarsAs answers a template's read made with one. Nothing of an
// identity is stored: it is signed from the allocation and the keyring
// whenever a client asks (at every start of the allocation's actor).

// signIdentities signs every task's default identity and its named ones
// with the keyring's active key (committing a first key when the keyring
// is empty), for a live allocation on the asking node.
func (a *Agent) signIdentities(ctx context.Context, req *messages.SignIdentitiesRequest) *messages.SignIdentitiesResponse {
	snap, al := a.allocForIdentity(ctx, req.GetAllocID())
	switch {
	case al == nil || al.GetNodeID() != req.GetNodeID():
		return &messages.SignIdentitiesResponse{Error: messages.Errorf(messages.CodeNotFound,
			"allocation %q is not placed on node %q", req.GetAllocID(), req.GetNodeID())}
	case al.TerminalStatus():
		return &messages.SignIdentitiesResponse{Error: messages.Errorf(messages.CodeInvalid,
			"allocation %q is terminal: it gets no identities", al.GetID())}
	}
	keys, err := a.signingKeys(ctx, snap)
	if err != nil {
		return &messages.SignIdentitiesResponse{Error: messages.NewError(messages.CodeUnavailable, err.Error())}
	}
	job := al.GetJob()
	if job == nil {
		job = snap.JobByID(al.GetNamespace(), al.GetJobID())
	}
	resp := &messages.SignIdentitiesResponse{}
	for _, g := range job.GetTaskGroups() {
		if g.GetName() != al.GetTaskGroup() {
			continue
		}
		for _, t := range g.GetTasks() {
			signed, err := a.signTask(keys, al, t)
			if err != nil {
				return &messages.SignIdentitiesResponse{Error: messages.NewError(messages.CodeInternal, err.Error())}
			}
			resp.Identities = append(resp.Identities, signed...)
		}
	}
	return resp
}

// signTask signs task t's default identity (whether or not it has an
// identity block) and its named ones.
func (a *Agent) signTask(keys []*messages.RootKey, al *messages.Allocation, t *messages.Task) ([]*messages.SignedIdentity, error) {
	var out []*messages.SignedIdentity
	for _, id := range append([]*messages.TaskIdentity{t.GetIdentity()}, t.GetIdentities()...) {
		c, err := identity.ForTask(a.cfg.Region, al, t.GetName(), id, a.clock.Now())
		if err != nil {
			return nil, err
		}
		jwt, err := identity.Sign(keys, c)
		if err != nil {
			return nil, err
		}
		out = append(out, &messages.SignedIdentity{Task: t.GetName(), Name: identity.NameOf(id), JWT: jwt})
	}
	return out, nil
}

// identityAllocWait bounds how long a server waits for an allocation it
// has not applied yet (a follower a little behind the leader that placed
// it).
const identityAllocWait = 5 * time.Second

// allocForIdentity is the allocation id in this server's store, waited
// for (at most identityAllocWait) when it is not there yet.
func (a *Agent) allocForIdentity(ctx context.Context, id string) (*state.Snap, *messages.Allocation) {
	ctx, cancel := context.WithTimeout(ctx, identityAllocWait)
	defer cancel()
	for {
		snap := a.store.Snapshot()
		al := snap.AllocByID(id)
		if al != nil || ctx.Err() != nil {
			return snap, al
		}
		a.store.Wait(ctx, snap.Index(state.TableAllocs), state.TableAllocs)
	}
}

// signingKeys are the keyring's keys, with an active one: on an empty
// keyring a first key is committed (through the leader), as the first
// variable write does.
func (a *Agent) signingKeys(ctx context.Context, snap *state.Snap) ([]*messages.RootKey, error) {
	if keyring.Active(snap.RootKeys()) != nil {
		return snap.RootKeys(), nil
	}
	key, err := keyring.NewRootKey(a.clock.Now())
	if err != nil {
		return nil, err
	}
	if _, _, err := a.Apply(ctx, &messages.Command{Cmd: &messages.Command_RotateKeyring{RotateKeyring: &messages.RotateKeyring{Key: key}}}); err != nil {
		return nil, fmt.Errorf("identity: first root key: %w", err)
	}
	return a.store.Snapshot().RootKeys(), nil
}

// readVarsAs answers a template's read made with a workload identity.
// With ACLs on the identity must verify (keyring, times, a live
// allocation) and may read only what Nomad's implicit workload rules
// allow: its job's variables (a list keeps those) and its namespace's
// services; its allocation must be on the node that asks (whose secret
// the server actor checked). With ACLs off it is a plain read.
func (a *Agent) readVarsAs(ctx context.Context, req *messages.IdentityVarReadRequest) *messages.VarReadResponse {
	read := req.GetRead()
	if !a.cfg.ACLEnabled {
		return a.readVars(ctx, read)
	}
	snap := a.store.Snapshot()
	wacl, claims, err := httpapi.WorkloadACL(snap, req.GetToken(), a.clock.Now())
	if err != nil {
		return &messages.VarReadResponse{Error: messages.NewError(messages.CodePermissionDenied, err.Error())}
	}
	if al := snap.AllocByID(claims.AllocationID); al.GetNodeID() != req.GetNodeID() {
		return &messages.VarReadResponse{Error: messages.Errorf(messages.CodePermissionDenied,
			"Permission denied: the workload identity's allocation is not placed on node %q", req.GetNodeID())}
	}
	if denied := workloadDenies(wacl, read); denied != "" {
		return &messages.VarReadResponse{Error: messages.NewError(messages.CodePermissionDenied, "Permission denied: "+denied)}
	}
	resp := a.readVars(ctx, read)
	if read.GetList() {
		kept := resp.Vars[:0]
		for _, v := range resp.GetVars() {
			if wacl.AllowVariableOperation(read.GetNamespace(), v.GetPath(), acl.VarList) {
				kept = append(kept, v)
			}
		}
		resp.Vars = kept
	}
	return resp
}

// workloadDenies says what of read the identity's ACL may not read ("":
// it may).
func workloadDenies(wacl *acl.ACL, read *messages.VarReadRequest) string {
	ns := state.NamespaceOrDefault(read.GetNamespace())
	switch {
	case read.GetListServices() || read.GetService() != "":
		if !wacl.AllowServiceRead(ns) {
			return fmt.Sprintf("the workload identity may not read services in namespace %q", ns)
		}
	case read.GetList():
		if !wacl.AllowNamespace(ns) {
			return fmt.Sprintf("the workload identity may not list variables in namespace %q", ns)
		}
	case read.GetPath() != "":
		if !wacl.AllowVariableOperation(ns, read.GetPath(), acl.VarRead) {
			return fmt.Sprintf("the workload identity may not read variable %q in namespace %q", read.GetPath(), ns)
		}
	}
	return ""
}

// SignIdentities implements alloc.IdentitySource: the identities of an
// allocation of this client, signed by any server.
func (c *serverConn) SignIdentities(ctx context.Context, allocID string) ([]*messages.SignedIdentity, error) {
	resp, err := c.call(ctx, &messages.SignIdentitiesRequest{AllocID: allocID, NodeID: c.a.node.GetID(), NodeSecretID: c.a.nodeSecret})
	if err != nil {
		return nil, err
	}
	r, ok := resp.(*messages.SignIdentitiesResponse)
	if !ok {
		return nil, fmt.Errorf("agent: sign identities: unexpected reply %T", resp)
	}
	if r.GetError() != nil {
		return nil, fmt.Errorf("agent: sign identities: %s", r.GetError().GetMessage())
	}
	return r.GetIdentities(), nil
}

// ReadVarsAs implements alloc.IdentitySource: a template's read made with
// its task's identity.
func (c *serverConn) ReadVarsAs(ctx context.Context, token string, req *messages.VarReadRequest) (*messages.VarReadResponse, error) {
	return varReadReply(c.call(ctx, &messages.IdentityVarReadRequest{Token: token, Read: req,
		NodeID: c.a.local.LocalNodeID, NodeSecretID: c.a.nodeSecret}))
}

// readVarsPlain answers a template's read made without an identity: with
// ACLs on only a watch of the index (no variable, no service) is
// answered.
func (a *Agent) readVarsPlain(ctx context.Context, req *messages.VarReadRequest) *messages.VarReadResponse {
	if a.cfg.ACLEnabled && (req.GetPath() != "" || req.GetList() || req.GetService() != "" || req.GetListServices()) {
		return &messages.VarReadResponse{Error: messages.NewError(messages.CodePermissionDenied,
			"Permission denied: with ACLs on a template reads with its task's workload identity")}
	}
	return a.readVars(ctx, req)
}
