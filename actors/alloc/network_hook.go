package alloc

import (
	"context"
	"errors"
	"fmt"

	"github.com/troupe-dev/troupe/messages"
	"github.com/troupe-dev/troupe/runtime/clientstate"
	"github.com/troupe-dev/troupe/runtime/cni"
)

// networkHook gives an allocation whose group asks for network { mode =
// "bridge" } its own network namespace (cni), before any other hook, and
// takes it back after everything else was let go. Its methods block: they
// run in workers of the alloc actor.
//
// The client state file keeps the network's record: it is written (with
// no CNI result yet) before Setup, so that a crash in the middle still
// leaves a record that says a network may exist, and again with the CNI
// result before any task starts. A record found on start (an agent
// restart, a host reboot) makes prerun Restore instead of Setup: CNI
// CHECK keeps a live namespace, and a lost one is made anew.
type networkHook struct {
	net   cni.Networker // nil: the client has no bridge networking
	db    *clientstate.DB
	alloc *messages.Allocation
}

// networkUp is what prerun did: rec is the network's record as written
// in the state file, nil when there is none (the group needs no network),
// also when prerun failed: a record means a network may be (half) there,
// to tear down. recreated: an existing network was made anew, so tasks
// still running in the old namespace have lost their network.
type networkUp struct {
	rec       *clientstate.AllocNetwork
	recreated bool
}

// prerun sets up, or restores, the allocation's network.
func (h *networkHook) prerun(ctx context.Context) (*networkUp, error) {
	up := &networkUp{}
	bridge, err := wantsBridge(h.alloc)
	if err != nil || !bridge {
		return up, err
	}
	if h.net == nil {
		return up, ErrNoBridge
	}
	req, err := setupRequest(h.alloc)
	if err != nil {
		return up, fmt.Errorf("%w: %w", ErrNetworkSetup, err)
	}
	id := h.alloc.GetID()
	prev, err := h.db.Network(id)
	if err != nil {
		return up, fmt.Errorf("%w: read state: %w", ErrNetworkSetup, err)
	}
	var res *cni.Result
	if prev != nil {
		up.rec = prev
		res, err = h.net.Restore(ctx, id, prev.RawResult, req)
	} else {
		pending := &clientstate.AllocNetwork{}
		if err := h.db.PutNetwork(id, pending); err != nil {
			return up, fmt.Errorf("%w: write state: %w", ErrNetworkSetup, err)
		}
		up.rec = pending
		res, err = h.net.Setup(ctx, req)
		if errors.Is(err, cni.ErrExists) {
			// left by a run whose record is lost: check it, or make it anew
			res, err = h.net.Restore(ctx, id, nil, req)
		}
	}
	if err != nil {
		return up, fmt.Errorf("%w: %w", ErrNetworkSetup, err)
	}
	if err := ctx.Err(); err != nil {
		return up, err // stopping: the next run restores from the record
	}
	rec := networkRecord(res)
	if err := h.db.PutNetwork(id, rec); err != nil {
		return up, fmt.Errorf("%w: write state: %w", ErrNetworkSetup, err)
	}
	return &networkUp{rec: rec, recreated: res.Recreated && prev != nil}, nil
}

// postrun tears the network down (CNI DEL and the forced cleanup) and
// drops the record once it is gone; rec is the network's record.
func (h *networkHook) postrun(ctx context.Context, rec *clientstate.AllocNetwork) error {
	if h.net == nil {
		return ErrNoBridge
	}
	req, err := setupRequest(h.alloc)
	if err != nil {
		// the ports are only needed for portmap's DEL; the cleanup finds
		// the allocation's rules by its ID
		req = cni.SetupRequest{AllocID: h.alloc.GetID(), JobID: h.alloc.GetJobID(), Group: h.alloc.GetTaskGroup()}
	}
	if err := h.net.Teardown(ctx, h.alloc.GetID(), rec.RawResult, req); err != nil {
		return fmt.Errorf("%w: %w", ErrNetworkTeardown, err)
	}
	return h.drop(ctx)
}

// drop forgets the network's record (after its teardown, or when the
// client gave up on it).
func (h *networkHook) drop(ctx context.Context) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	if err := h.db.DeleteNetwork(h.alloc.GetID()); err != nil {
		return fmt.Errorf("%w: write state: %w", ErrNetworkTeardown, err)
	}
	return nil
}
