package state

import (
	"fmt"
	"log/slog"
	"sync"
	"sync/atomic"
	"time"

	"github.com/hashicorp/raft"
	"google.golang.org/protobuf/proto"

	"github.com/troupe-dev/troupe/messages"
)

// RegisterJobResult is the FSM's answer to RegisterJob.
type RegisterJobResult struct {
	Index          uint64
	JobModifyIndex uint64
	EvalID         string
}

// DeregisterJobResult is the FSM's answer to DeregisterJob.
type DeregisterJobResult struct {
	Index          uint64
	JobModifyIndex uint64
	EvalID         string
}

// FSM applies raft log entries (proto-encoded messages.Command) to a Store.
// It implements raft.FSM. Apply's response is the handler's result value, an
// error value (ErrJobNotFound, ErrNodeNotFound, ErrAllocNotFound,
// ErrBadCommand; for volume commands ErrVolumeNotFound, ErrInvalidVolume,
// ErrVolumeInUse, the claim errors of ApplyClaimVolume and
// ApplyUpdateClaimState) that changed nothing, or nil.
type FSM struct {
	store     *Store
	logger    *slog.Logger
	now       func() time.Time
	lastIndex atomic.Uint64

	mu        sync.Mutex
	callbacks []func(Event)
}

var _ raft.FSM = (*FSM)(nil)

// NewFSM returns an FSM writing to store. A nil logger discards.
func NewFSM(store *Store, logger *slog.Logger) *FSM {
	if logger == nil {
		logger = slog.New(slog.DiscardHandler)
	}
	return &FSM{store: store, logger: logger, now: time.Now}
}

// Store returns the store the FSM writes to.
func (f *FSM) Store() *Store { return f.store }

// SetClock replaces the clock Restore uses to tell ready evaluations from
// delayed ones (Apply uses the command's own time). For tests.
func (f *FSM) SetClock(now func() time.Time) { f.now = now }

// OnApply registers fn to be called synchronously, on the FSM goroutine,
// after each applied command and after a Restore. fn must be quick and
// must not block (hand the event to a mailbox).
func (f *FSM) OnApply(fn func(ev Event)) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.callbacks = append(f.callbacks, fn)
}

func (f *FSM) publish(ev Event) {
	f.mu.Lock()
	cbs := f.callbacks
	f.mu.Unlock()
	for _, fn := range cbs {
		fn(ev)
	}
}

// Apply applies one committed log entry and records its index as the
// store's applied index (Store.WaitApplied), whether or not it changed
// anything.
func (f *FSM) Apply(l *raft.Log) any {
	f.lastIndex.Store(l.Index)
	// Whatever the entry changed (maybe nothing), it is applied once
	// its transaction has committed.
	defer f.store.setApplied(l.Index)
	if l.Type != raft.LogCommand {
		return nil
	}
	cmd := &messages.Command{}
	if err := proto.Unmarshal(l.Data, cmd); err != nil {
		f.logger.Error("raft log entry does not decode", "index", l.Index, "err", err)
		return fmt.Errorf("%w: index %d: %w", ErrBadCommand, l.Index, err)
	}
	resp := f.applyCommand(l.Index, cmd)
	f.store.recordEvents(l.Index, cmd, resp)
	return resp
}

func (f *FSM) applyCommand(index uint64, cmd *messages.Command) any {
	switch c := cmd.Cmd.(type) {
	case *messages.Command_RegisterJob:
		return f.run(index, cmd.Time, func(w *writeTxn) any { return applyRegisterJob(w, c.RegisterJob) })
	case *messages.Command_DispatchJob:
		return f.run(index, cmd.Time, func(w *writeTxn) any { return applyDispatchJob(w, c.DispatchJob) })
	case *messages.Command_DeregisterJob:
		return f.run(index, cmd.Time, func(w *writeTxn) any { return applyDeregisterJob(w, c.DeregisterJob) })
	case *messages.Command_UpsertEvals:
		return f.run(index, cmd.Time, func(w *writeTxn) any { return applyUpsertEvals(w, c.UpsertEvals) })
	case *messages.Command_ApplyPlan:
		if err := c.ApplyPlan.ExpandPlaced(); err != nil {
			return fmt.Errorf("%w: %w", ErrBadCommand, err)
		}
		return f.run(index, cmd.Time, func(w *writeTxn) any { return applyPlan(w, c.ApplyPlan) })
	case *messages.Command_UpdateAllocsFromClient:
		return f.run(index, cmd.Time, func(w *writeTxn) any { return applyClientAllocs(w, c.UpdateAllocsFromClient) })
	case *messages.Command_RegisterNode:
		return f.run(index, cmd.Time, func(w *writeTxn) any { return applyRegisterNode(w, c.RegisterNode) })
	case *messages.Command_UpdateNodeStatus:
		return f.run(index, cmd.Time, func(w *writeTxn) any { return applyNodeStatus(w, c.UpdateNodeStatus) })
	case *messages.Command_UpdateNodeDrain:
		return f.run(index, cmd.Time, func(w *writeTxn) any { return applyNodeDrain(w, c.UpdateNodeDrain) })
	case *messages.Command_UpdateNodeEligibility:
		return f.run(index, cmd.Time, func(w *writeTxn) any { return applyNodeEligibility(w, c.UpdateNodeEligibility) })
	case *messages.Command_StopAlloc:
		return f.run(index, cmd.Time, func(w *writeTxn) any { return applyStopAlloc(w, c.StopAlloc) })
	case *messages.Command_SetSchedulerConfig:
		return f.run(index, cmd.Time, func(w *writeTxn) any { return applySetSchedulerConfig(w, c.SetSchedulerConfig) })
	case *messages.Command_UpsertNodePools:
		return f.run(index, cmd.Time, func(w *writeTxn) any { return applyUpsertNodePools(w, c.UpsertNodePools) })
	case *messages.Command_DeleteNodePools:
		return f.run(index, cmd.Time, func(w *writeTxn) any { return applyDeleteNodePools(w, c.DeleteNodePools) })
	case *messages.Command_UpsertNamespaces:
		return f.run(index, cmd.Time, func(w *writeTxn) any { return applyUpsertNamespaces(w, c.UpsertNamespaces) })
	case *messages.Command_DeleteNamespaces:
		return f.run(index, cmd.Time, func(w *writeTxn) any { return applyDeleteNamespaces(w, c.DeleteNamespaces) })
	default:
		return f.applyVolumeCommand(index, cmd)
	}
}

func (f *FSM) applyVolumeCommand(index uint64, cmd *messages.Command) any {
	switch c := cmd.Cmd.(type) {
	case *messages.Command_RegisterVolume:
		return f.run(index, cmd.Time, func(w *writeTxn) any { return applyRegisterVolume(w, c.RegisterVolume) })
	case *messages.Command_DeregisterVolume:
		return f.run(index, cmd.Time, func(w *writeTxn) any { return applyDeregisterVolume(w, c.DeregisterVolume) })
	case *messages.Command_ClaimVolume:
		return f.run(index, cmd.Time, func(w *writeTxn) any { return applyClaimVolume(w, c.ClaimVolume) })
	case *messages.Command_UpdateClaimState:
		return f.run(index, cmd.Time, func(w *writeTxn) any { return applyUpdateClaimState(w, c.UpdateClaimState) })
	case *messages.Command_UpsertPluginInstances:
		return f.run(index, cmd.Time, func(w *writeTxn) any { return applyUpsertPlugins(w, c.UpsertPluginInstances) })
	case *messages.Command_GarbageCollect:
		return f.run(index, cmd.Time, func(w *writeTxn) any { return applyGC(w, c.GarbageCollect) })
	case *messages.Command_VarApply:
		return f.run(index, cmd.Time, func(w *writeTxn) any { return applyVarApply(w, c.VarApply) })
	case *messages.Command_RotateKeyring:
		return f.run(index, cmd.Time, func(w *writeTxn) any { return applyRotateKeyring(w, c.RotateKeyring) })
	}
	if h := deploymentCommand(cmd); h != nil {
		return f.run(index, cmd.Time, h)
	}
	if r, ok := f.applyServiceCommand(index, cmd); ok {
		return r
	}
	if r, ok := f.applyACLCommand(index, cmd); ok {
		return r
	}
	f.logger.Error("raft log entry carries no known command", "index", index)
	return fmt.Errorf("%w: index %d: no known command", ErrBadCommand, index)
}

// run executes one handler in a write transaction. An error result aborts
// the transaction; anything else commits it and publishes the event.
func (f *FSM) run(index uint64, now int64, h func(w *writeTxn) any) any {
	w := newWriteTxn(f.store, index, now, f.logger)
	resp := h(w)
	if err, ok := resp.(error); ok {
		w.abort()
		return err
	}
	f.publish(w.commit())
	return resp
}
