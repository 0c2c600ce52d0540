package state

import (
	"slices"

	"github.com/troupe-dev/troupe/messages"
)

// Event tells the actors what one applied command (or a Restore) changed.
// It is built by the FSM and handed to the OnApply callbacks; they must not
// mutate it or the evaluations it points to.
type Event struct {
	// Index is the raft index of the change.
	Index uint64
	// EvalsReady are IDs of evaluations now pending whose WaitUntil has
	// passed or is 0: the scheduler should process them.
	EvalsReady []string
	// DelayedEvals are pending evaluations whose WaitUntil is in the future.
	DelayedEvals []*messages.Evaluation
	// EvalsEnded are IDs of evaluations stored with a terminal status
	// (complete, failed, canceled): the scheduler stops waiting for them.
	EvalsEnded []string
	// NodesChanged are IDs of nodes whose allocations changed on the
	// desired side (placed, stopped).
	NodesChanged []string
	// NodeUpdated are IDs of nodes whose node record changed.
	NodeUpdated []string
	// NodesDeleted are IDs of nodes the garbage collector removed: the
	// leader stops their actors.
	NodesDeleted []string
	// JobsChanged are the jobs whose record changed, as JobKey(ns, id).
	JobsChanged []string
	// VolumesChanged are IDs of CSI volumes registered, changed (claims,
	// plugin health) or deregistered; look them up with
	// CSIVolumeAnyNamespace (nil: deregistered).
	VolumesChanged []string
	// PluginsChanged are IDs of CSI plugins whose instances changed,
	// created or deleted (CSIPluginByID nil: deleted).
	PluginsChanged []string
	// AllocsStopped are IDs of allocations whose client status became
	// terminal (complete, failed, lost) in this change: the volume
	// manager releases their claims.
	AllocsStopped []string
	// SchedulerConfigChanged says the scheduler configuration was set
	// (or restored): a paused scheduler looks again.
	SchedulerConfigChanged bool
	// DeploymentsChanged are IDs of deployments created or changed
	// (status, counters, allocation health).
	DeploymentsChanged []string
}

// Empty reports whether the event says nothing changed.
func (e *Event) Empty() bool {
	return len(e.EvalsReady)+len(e.DelayedEvals)+len(e.EvalsEnded)+len(e.NodesChanged)+len(e.NodeUpdated)+len(e.NodesDeleted)+len(e.JobsChanged)+
		len(e.VolumesChanged)+len(e.PluginsChanged)+len(e.AllocsStopped)+len(e.DeploymentsChanged) == 0 && !e.SchedulerConfigChanged
}

type eventBuilder struct {
	index   uint64
	ready   map[string]bool
	delayed map[string]*messages.Evaluation
	ended   map[string]bool
	nodes   map[string]bool
	updated map[string]bool
	deleted map[string]bool
	jobs    map[string]bool
	volumes map[string]bool
	plugins map[string]bool
	stopped map[string]bool
	config  bool
	deploys map[string]bool
}

func newEventBuilder(index uint64) *eventBuilder {
	return &eventBuilder{
		index: index, ready: map[string]bool{}, delayed: map[string]*messages.Evaluation{}, ended: map[string]bool{},
		nodes: map[string]bool{}, updated: map[string]bool{}, deleted: map[string]bool{}, jobs: map[string]bool{},
		volumes: map[string]bool{}, plugins: map[string]bool{}, stopped: map[string]bool{},
		deploys: map[string]bool{},
	}
}

// eval records a pending evaluation as ready or delayed relative to now,
// and a terminal one as ended.
func (b *eventBuilder) eval(e *messages.Evaluation, now int64) {
	if e.TerminalStatus() {
		b.ended[e.ID] = true
		delete(b.ready, e.ID)
		delete(b.delayed, e.ID)
		return
	}
	if e.Status != messages.EvalStatusPending {
		return
	}
	delete(b.ended, e.ID)
	if e.WaitUntil == 0 || e.WaitUntil <= now {
		b.ready[e.ID] = true
		delete(b.delayed, e.ID)
		return
	}
	b.delayed[e.ID] = e
	delete(b.ready, e.ID)
}

func (b *eventBuilder) nodeChanged(id string) {
	if id != "" {
		b.nodes[id] = true
	}
}

func (b *eventBuilder) nodeUpdated(id string) { b.updated[id] = true }

func (b *eventBuilder) nodeDeleted(id string) { b.deleted[id] = true }

func (b *eventBuilder) job(key string) { b.jobs[key] = true }

func (b *eventBuilder) volume(id string) { b.volumes[id] = true }

func (b *eventBuilder) plugin(id string) { b.plugins[id] = true }

func (b *eventBuilder) allocStopped(id string) { b.stopped[id] = true }

func (b *eventBuilder) schedulerConfig() { b.config = true }

func (b *eventBuilder) deployment(id string) { b.deploys[id] = true }

func (b *eventBuilder) build() Event {
	for id := range b.deleted { // a deleted node changes no more
		delete(b.updated, id)
		delete(b.nodes, id)
	}
	ev := Event{
		Index:        b.index,
		EvalsReady:   sortedKeys(b.ready),
		EvalsEnded:   sortedKeys(b.ended),
		NodesChanged: sortedKeys(b.nodes),
		NodeUpdated:  sortedKeys(b.updated),
		NodesDeleted: sortedKeys(b.deleted),
		JobsChanged:  sortedKeys(b.jobs),

		VolumesChanged: sortedKeys(b.volumes),
		PluginsChanged: sortedKeys(b.plugins),
		AllocsStopped:  sortedKeys(b.stopped),

		SchedulerConfigChanged: b.config,
		DeploymentsChanged:     sortedKeys(b.deploys),
	}
	for _, id := range sortedKeys(b.delayed) {
		ev.DelayedEvals = append(ev.DelayedEvals, b.delayed[id])
	}
	return ev
}

func sortedKeys[V any](m map[string]V) []string {
	if len(m) == 0 {
		return nil
	}
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	slices.Sort(out)
	return out
}
