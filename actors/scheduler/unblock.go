package scheduler

import (
	"maps"
	"slices"
	"strconv"
	"strings"

	"github.com/asynkron/protoactor-go/actor"

	"github.com/troupe-dev/troupe/messages"
)

// CSIChanged tells the scheduler which CSI volumes and plugins an applied
// change touched (state.Event's VolumesChanged and PluginsChanged): the
// blocked evaluations that one of them may now serve are retried
// (csiUnblocked), the others stay blocked.
type CSIChanged struct {
	Volumes []string
	Plugins []string
}

// Unblock reasons, in the evaluation's StatusDescription.
const (
	descUnblockedCapacity = "unblocked: capacity changed"
	descUnblockedCSI      = "unblocked: a CSI volume or plugin it waits for changed"
)

// csiUnblocked returns the blocked evaluations that the change may let
// place what they could not: a group failed (FailedTGAllocs) for a reason
// of a CSI volume or plugin in the change, and that reason is gone now:
//
//   - a changed volume the group names was missing, unschedulable or out
//     of writer claims, and can now take the group's claim (registered,
//     schedulable and, for a group that writes to a single-writer volume,
//     with no writer claim left: a claim was freed); or its nodes did not
//     meet its topology (a volume registered again with other topologies);
//   - a changed plugin had no healthy node instance for a volume the
//     group names, and has one now.
//
// A change that cannot help unblocks nothing: a claim moving on while
// still held, an unrelated volume or plugin, or a group that failed for
// memory while its multi-writer volume sees claims come and go (that is
// CapacityChanged's business). The cost is one job read per blocked
// evaluation and the volumes its failed groups name; no allocation is
// read.
func csiUnblocked(snap Snapshot, blocked []*messages.Evaluation, ch *CSIChanged) []*messages.Evaluation {
	src, ok := snap.(CSISource)
	if !ok || len(blocked) == 0 || len(ch.Volumes)+len(ch.Plugins) == 0 {
		return nil
	}
	vols := setOf(ch.Volumes)
	plugins := setOf(ch.Plugins)
	var out []*messages.Evaluation
	for _, e := range blocked {
		job := snap.JobByID(e.GetNamespace(), e.GetJobID())
		for _, tg := range job.GetTaskGroups() {
			m := e.GetFailedTGAllocs()[tg.GetName()]
			if m != nil && groupUnblocked(src, job.GetNamespace(), tg, m.GetConstraintFiltered(), vols, plugins) {
				out = append(out, e)
				break
			}
		}
	}
	return out
}

// groupUnblocked reports whether tg, which failed with the filter reasons
// failed, failed for a volume among vols that can take its claim now, or
// for a plugin among plugins that has a healthy node instance now.
func groupUnblocked(src CSISource, ns string, tg *messages.TaskGroup, failed map[string]int32, vols, plugins map[string]bool) bool {
	for _, vr := range tg.GetVolumes() {
		if vr.GetType() != "csi" {
			continue
		}
		for id := range vols {
			if !namesVolume(vr, tg.GetCount(), id) {
				continue
			}
			volFailed := failed[reasonVolumeMissing(id)]+failed[reasonVolumeUnschedulable(id)]+failed[reasonVolumeWriters(id)] > 0
			if (volFailed && takesClaim(src.CSIVolumeByID(ns, id), vr)) || failed[FilterCSITopology] > 0 {
				return true
			}
		}
		if len(plugins) == 0 {
			continue
		}
		for _, id := range volumeIDs(vr, tg.GetCount()) {
			vol := src.CSIVolumeByID(ns, id)
			p := vol.GetPluginID()
			if vol != nil && plugins[p] && failed[reasonPluginMissing(p)] > 0 && hasHealthyNode(src.CSIPluginByID(p)) {
				return true
			}
		}
	}
	return false
}

// namesVolume reports whether the request names volume id: its source,
// or source[N] with N below the group's count for a per_alloc request.
func namesVolume(vr *messages.VolumeRequest, count int32, id string) bool {
	if !vr.GetPerAlloc() {
		return id == vr.GetSource()
	}
	rest, ok := strings.CutPrefix(id, vr.GetSource()+"[")
	if !ok {
		return false
	}
	digits, ok := strings.CutSuffix(rest, "]")
	n, err := strconv.ParseUint(digits, 10, 32)
	return ok && err == nil && n < uint64(max(count, 0)) && PerAllocSource(vr.GetSource(), uint32(n)) == id
}

// volumeIDs are the volumes the request names for a group of count.
func volumeIDs(vr *messages.VolumeRequest, count int32) []string {
	if !vr.GetPerAlloc() {
		return []string{vr.GetSource()}
	}
	out := make([]string, 0, max(count, 0))
	for i := range max(count, 0) {
		out = append(out, PerAllocSource(vr.GetSource(), uint32(i)))
	}
	return out
}

// takesClaim is the volume side of resolveCSI: the volume exists, is
// schedulable, and has a writer claim free when vr writes to a
// single-writer volume.
func takesClaim(vol *messages.CSIVolume, vr *messages.VolumeRequest) bool {
	if vol == nil || !vol.GetSchedulable() {
		return false
	}
	return vr.GetReadOnly() || !singleWriter[vr.GetAccessMode()] || writers(vol) == 0
}

func hasHealthyNode(p *messages.CSIPlugin) bool {
	for _, in := range p.GetNodes() {
		if in.GetHealthy() {
			return true
		}
	}
	return false
}

func setOf(ids []string) map[string]bool {
	m := make(map[string]bool, len(ids))
	for _, id := range ids {
		m[id] = true
	}
	return m
}

// missedChanges are the changes that arrived while a plan was in flight.
// That plan's blocked evaluation (made against the state before them) was
// not stored yet when they were handled, so they could not unblock it:
// they are handled again once the plan landed, or a freed claim would
// leave the evaluation blocked for good.
type missedChanges struct {
	capacity bool
	volumes  map[string]bool
	plugins  map[string]bool
}

// note records a change that arrives while a plan is in flight.
func (m *missedChanges) note(capacity bool, ch *CSIChanged) {
	m.capacity = m.capacity || capacity
	if ch == nil {
		return
	}
	if m.volumes == nil {
		m.volumes, m.plugins = map[string]bool{}, map[string]bool{}
	}
	for _, id := range ch.Volumes {
		m.volumes[id] = true
	}
	for _, id := range ch.Plugins {
		m.plugins[id] = true
	}
}

// replayMissed handles again what arrived while the plan now landed was
// in flight.
func (a *Actor) replayMissed(ctx actor.Context) {
	m := a.missed
	a.missed = missedChanges{}
	if m.capacity {
		a.onCapacityChanged(ctx)
	}
	if len(m.volumes)+len(m.plugins) > 0 {
		a.onCSIChanged(ctx, &CSIChanged{Volumes: slices.Sorted(maps.Keys(m.volumes)), Plugins: slices.Sorted(maps.Keys(m.plugins))})
	}
}

// onCapacityChanged retries every blocked evaluation.
func (a *Actor) onCapacityChanged(ctx actor.Context) {
	if a.flight.busy() {
		a.missed.note(true, nil)
	}
	blocked := a.spec.State().EvalsByStatus(messages.EvalStatusBlocked)
	a.unblock(ctx, blocked, blocked, descUnblockedCapacity)
}

// onCSIChanged retries the blocked evaluations the change may serve.
func (a *Actor) onCSIChanged(ctx actor.Context, m *CSIChanged) {
	if a.flight.busy() {
		a.missed.note(false, m)
	}
	view := a.spec.State()
	blocked := view.EvalsByStatus(messages.EvalStatusBlocked)
	a.unblock(ctx, blocked, csiUnblocked(view, blocked, m), descUnblockedCSI)
}

// unblock moves the newest blocked evaluation of each job of chosen back
// to pending, so that it is planned again, and cancels the job's older
// blocked ones (from blocked, every blocked evaluation).
func (a *Actor) unblock(ctx actor.Context, blocked, chosen []*messages.Evaluation, why string) {
	if len(chosen) == 0 {
		return
	}
	jobs := map[string]bool{}
	for _, e := range chosen {
		jobs[e.GetNamespace()+"/"+e.GetJobID()] = true
	}
	latest := map[string]*messages.Evaluation{}
	var stale []*messages.Evaluation
	for _, e := range blocked {
		key := e.GetNamespace() + "/" + e.GetJobID()
		if !jobs[key] {
			continue
		}
		if old := latest[key]; old != nil {
			if old.GetCreateIndex() > e.GetCreateIndex() {
				stale = append(stale, e)
				continue
			}
			stale = append(stale, old)
		}
		latest[key] = e
	}
	now := a.spec.Clock.Now().UnixNano()
	up := &messages.UpsertEvals{}
	for _, e := range latest {
		c := cloneEval(e)
		c.Status, c.StatusDescription, c.ModifyTime = messages.EvalStatusPending, why, now
		up.Evals = append(up.Evals, c)
	}
	for _, e := range stale {
		c := cloneEval(e)
		c.Status, c.StatusDescription, c.ModifyTime = messages.EvalStatusCanceled, "superseded by a newer blocked evaluation", now
		up.Evals = append(up.Evals, c)
	}
	a.propose(ctx, up)
}
