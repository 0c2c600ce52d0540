package agent

import (
	"context"
	"fmt"
	"time"

	"google.golang.org/protobuf/proto"

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

// readVars answers a template's read from this server's store: after the
// variables and services tables pass MinIndex (or the wait ends), the
// variable at Path decrypted, with List the metadata of those under the
// prefix, or the registrations of a service (Service, ListServices).
func (a *Agent) readVars(ctx context.Context, req *messages.VarReadRequest) *messages.VarReadResponse {
	if req.GetMinIndex() > 0 {
		wait := time.Duration(req.GetWait())
		if wait <= 0 {
			wait = varReadDefaultWait
		}
		wctx, cancel := context.WithTimeout(ctx, min(wait, varReadMaxWait))
		a.store.Wait(wctx, req.GetMinIndex(), state.TableVariables, state.TableServices)
		cancel()
	}
	snap := a.store.Snapshot()
	resp := &messages.VarReadResponse{Index: snap.Index(state.TableVariables, state.TableServices)}
	switch {
	case req.GetListServices():
		resp.Services = snap.ServicesByNamespace(req.GetNamespace())
		return resp
	case req.GetService() != "":
		resp.Services = snap.ServicesByName(req.GetNamespace(), req.GetService())
		return resp
	}
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
	return varReadReply(c.call(ctx, req))
}

// varReadReply is a server's answer to a variable read (plain or with an
// identity).
func varReadReply(resp proto.Message, err error) (*messages.VarReadResponse, error) {
	if err != nil {
		return nil, err
	}
	r, ok := resp.(*messages.VarReadResponse)
	if !ok {
		return nil, fmt.Errorf("agent: variable read: unexpected reply %T", resp)
	}
	return r, nil
}
