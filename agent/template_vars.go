package agent

import (
	"context"
	"fmt"
	"time"

	"github.com/troupe-dev/troupe/cluster/keyring"
	"github.com/troupe-dev/troupe/cluster/state"
	"github.com/troupe-dev/troupe/messages"
)

// Bounds of a template's blocking read, as Nomad's blocking queries: the
// default wait and the longest.
const (
	varReadDefaultWait = 5 * time.Minute
	varReadMaxWait     = 10 * time.Minute
)

// readVars answers a template's variable read from this server's store:
// after the variables table passes MinIndex (or the wait ends), the
// variable at Path decrypted, or with List the metadata of those under
// the prefix.
func (a *Agent) readVars(ctx context.Context, req *messages.VarReadRequest) *messages.VarReadResponse {
	if req.GetMinIndex() > 0 {
		wait := time.Duration(req.GetWait())
		if wait <= 0 {
			wait = varReadDefaultWait
		}
		wctx, cancel := context.WithTimeout(ctx, min(wait, varReadMaxWait))
		a.store.Wait(wctx, req.GetMinIndex(), state.TableVariables)
		cancel()
	}
	snap := a.store.Snapshot()
	resp := &messages.VarReadResponse{Index: snap.Index(state.TableVariables)}
	if req.GetList() {
		for _, v := range snap.VariablesByPrefix(req.GetNamespace(), req.GetPath()) {
			resp.Vars = append(resp.Vars, &messages.VarData{Path: v.Path, CreateIndex: v.CreateIndex, ModifyIndex: v.ModifyIndex})
		}
		return resp
	}
	if req.GetPath() == "" {
		return resp // a watch: only the index
	}
	v := snap.Variable(req.GetNamespace(), req.GetPath())
	if v == nil {
		return resp
	}
	items, err := keyring.Open(snap.RootKeys(), v.Namespace, v.Path, v.Data)
	if err != nil {
		resp.Error = messages.NewError(messages.CodeInternal, "variable "+v.Path+": "+err.Error())
		return resp
	}
	resp.Vars = []*messages.VarData{{Path: v.Path, Items: items, CreateIndex: v.CreateIndex, ModifyIndex: v.ModifyIndex}}
	return resp
}

// ReadVars implements alloc.VarSource: a template's read, at any server.
func (c *serverConn) ReadVars(ctx context.Context, req *messages.VarReadRequest) (*messages.VarReadResponse, error) {
	resp, err := c.call(ctx, req)
	if err != nil {
		return nil, err
	}
	r, ok := resp.(*messages.VarReadResponse)
	if !ok {
		return nil, fmt.Errorf("agent: variable read: unexpected reply %T", resp)
	}
	return r, nil
}
