package alloc

import (
	"context"
	"errors"
	"fmt"

	"github.com/asynkron/protoactor-go/actor"
	"google.golang.org/protobuf/proto"

	"github.com/troupe-dev/troupe/actors"
	"github.com/troupe-dev/troupe/messages"
	"github.com/troupe-dev/troupe/runtime/clientstate"
	"github.com/troupe-dev/troupe/runtime/cni"
)

// networkHook gives an allocation whose group asks for network { mode =
// "bridge" } its own network namespace (cni), first of all hooks, and
// takes it back last, after everything else was let go. Its phases run on
// the alloc actor; the CNI calls and state writes (networkCalls) run in
// workers.
//
// The client state file keeps the network's record: it is written (with
// no CNI result yet) before Setup, so that a crash in the middle still
// leaves a record that says a network may exist, and again with the CNI
// result before any task starts. A record found on start (an agent
// restart, a host reboot; Restore) makes prerun Restore instead of Setup:
// CNI CHECK keeps a live namespace, and a lost one is made anew. A failed
// teardown is retried with backoff (Spec.NetworkRetry, NetworkAttempts);
// then the hook gives up (abandon): it drops the record and leaves the
// rest to the agent's network GC.
type networkHook struct {
	a         *Actor
	retry     hookRetry
	rec       *clientstate.AllocNetwork // the network's record; nil: none held
	recreated bool                      // restored into a new netns: re-attached tasks lost theirs
}

// Messages of the network hook's workers.
type (
	// networkReady: prerun answered.
	networkReady struct {
		up  *networkUp
		err error
	}
	// networkDown: a teardown (or, dropped, abandon) attempt answered.
	networkDown struct {
		err     error
		dropped bool
	}
)

// Name implements Hook.
func (h *networkHook) Name() string { return "network" }

func (h *networkHook) plan() hookPlan {
	return hookPlan{Name: h.Name(), Prerun: true, Postrun: true, PostrunRetry: &h.retry, Abandon: true}
}

// Restore implements restoreHook: the network the allocation may hold.
func (h *networkHook) Restore(stored *clientstate.StoredAlloc) { h.rec = stored.Network }

func (h *networkHook) holding() bool { return h.rec != nil }

func (h *networkHook) calls() *networkCalls {
	return &networkCalls{net: h.a.spec.Network, db: h.a.spec.DB, alloc: proto.Clone(h.a.alloc).(*messages.Allocation)}
}

func (h *networkHook) start(ctx actor.Context, p hookPhase) bool {
	calls := h.calls()
	switch {
	case p == hookPrerun:
		actors.Go(ctx, func(c context.Context) any {
			up, err := calls.prerun(c)
			if c.Err() != nil {
				return nil // stopping: a restarted actor restores from the record
			}
			return &networkReady{up: up, err: err}
		})
	case h.rec == nil:
		return false // no network to tear down
	case p == hookPostrun:
		rec := h.rec.Clone()
		actors.Go(ctx, func(c context.Context) any {
			err := calls.postrun(c, rec)
			if c.Err() != nil {
				return nil // stopping: a restarted actor tears it down from the record
			}
			return &networkDown{err: err}
		})
	default: // abandon: the agent's network GC removes what is left
		actors.Go(ctx, func(c context.Context) any {
			err := calls.drop(c)
			if c.Err() != nil {
				return nil
			}
			return &networkDown{err: err, dropped: true}
		})
	}
	return true
}

// onReady keeps the network's record and tells the server the address.
func (h *networkHook) onReady(ctx actor.Context, m *networkReady) {
	if !h.a.current(h, hookPrerun) {
		return
	}
	if m.up != nil {
		h.rec, h.recreated = m.up.rec, m.up.recreated
	}
	if m.err != nil {
		h.a.hookFinished(ctx, hookPrerun, fmt.Errorf("%s: %w", h.Name(), m.err))
		return
	}
	if st := networkStatus(h.rec); st != nil {
		h.a.log.Info("network ready", "netns", h.rec.NetnsPath, "address", h.rec.IP, "recreated", h.recreated)
		h.a.alloc.NetworkStatus = st
		h.a.spec.DB.PutAlloc(h.a.alloc)
		h.a.report(ctx)
	}
	h.a.hookFinished(ctx, hookPrerun, nil)
}

// onDown forgets the record once the network is gone, or given up on.
func (h *networkHook) onDown(ctx actor.Context, m *networkDown) {
	p := hookPostrun
	if m.dropped {
		p = hookAbandon
	}
	if !h.a.current(h, p) {
		return
	}
	if m.err == nil && !m.dropped {
		h.a.log.Info("network torn down")
	}
	if m.err == nil || m.dropped {
		h.rec = nil
	}
	h.a.hookFinished(ctx, p, m.err)
}

// networkCalls are the network hook's blocking calls: they run in workers
// of the alloc actor, on a copy of the allocation.
type networkCalls struct {
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
func (h *networkCalls) prerun(ctx context.Context) (*networkUp, error) {
	up := &networkUp{}
	bridge, err := wantsBridge(h.alloc)
	if err != nil || !bridge {
		return up, err
	}
	if h.net == nil {
		return up, errNoBridge
	}
	req, err := setupRequest(h.alloc)
	if err != nil {
		return up, fmt.Errorf("%w: %w", errNetworkSetup, err)
	}
	id := h.alloc.GetID()
	prev, err := h.db.Network(id)
	if err != nil {
		return up, fmt.Errorf("%w: read state: %w", errNetworkSetup, err)
	}
	var res *cni.Result
	if prev != nil {
		up.rec = prev
		res, err = h.net.Restore(ctx, id, prev.RawResult, req)
	} else {
		pending := &clientstate.AllocNetwork{}
		if err := h.db.PutNetwork(id, pending); err != nil {
			return up, fmt.Errorf("%w: write state: %w", errNetworkSetup, err)
		}
		up.rec = pending
		res, err = h.net.Setup(ctx, req)
		if errors.Is(err, cni.ErrExists) {
			// left by a run whose record is lost: check it, or make it anew
			res, err = h.net.Restore(ctx, id, nil, req)
		}
	}
	if err != nil {
		return up, fmt.Errorf("%w: %w", errNetworkSetup, err)
	}
	if err := ctx.Err(); err != nil {
		return up, err // stopping: the next run restores from the record
	}
	rec := networkRecord(res)
	if err := h.db.PutNetwork(id, rec); err != nil {
		return up, fmt.Errorf("%w: write state: %w", errNetworkSetup, err)
	}
	return &networkUp{rec: rec, recreated: res.Recreated && prev != nil}, nil
}

// postrun tears the network down (CNI DEL and the forced cleanup) and
// drops the record once it is gone; rec is the network's record.
func (h *networkCalls) postrun(ctx context.Context, rec *clientstate.AllocNetwork) error {
	if h.net == nil {
		return errNoBridge
	}
	req, err := setupRequest(h.alloc)
	if err != nil {
		// the ports are only needed for portmap's DEL; the cleanup finds
		// the allocation's rules by its ID
		req = cni.SetupRequest{AllocID: h.alloc.GetID(), JobID: h.alloc.GetJobID(), Group: h.alloc.GetTaskGroup()}
	}
	if err := h.net.Teardown(ctx, h.alloc.GetID(), rec.RawResult, req); err != nil {
		return fmt.Errorf("%w: %w", errNetworkTeardown, err)
	}
	return h.drop(ctx)
}

// drop forgets the network's record (after its teardown, or when the
// client gave up on it).
func (h *networkCalls) drop(ctx context.Context) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	if err := h.db.DeleteNetwork(h.alloc.GetID()); err != nil {
		return fmt.Errorf("%w: write state: %w", errNetworkTeardown, err)
	}
	return nil
}
