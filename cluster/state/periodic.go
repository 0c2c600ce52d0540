package state

import (
	"errors"
	"fmt"
	"strings"
	"time"

	memdb "github.com/hashicorp/go-memdb"

	"github.com/troupe-dev/troupe/messages"
)

// Periodic jobs: each one's last launch, keyed by (namespace, job), is
// stored by the same command that registers the child it launched, so a
// leader that takes over knows exactly which launch came last.

const tablePeriodicLaunches = "periodic_launches"

// PeriodicChildInfix joins a periodic job's ID and its child's launch
// time: "<parent>/periodic-<unix seconds>", as Nomad names children.
const PeriodicChildInfix = "/periodic-"

// ErrLaunchNotLater is the FSM's answer to a launch that is not later
// than the stored one (a second leader's, or one replayed).
var ErrLaunchNotLater = errors.New("state: periodic launch is not later than the last one")

func periodicLaunchTable() *memdb.TableSchema {
	return table(tablePeriodicLaunches, index(idxID, true, func(o any) []byte {
		l := o.(*messages.PeriodicLaunch)
		return key2(l.Namespace, l.ID)
	}))
}

// PeriodicLaunch is the last launch of a periodic job, or nil.
func (s *Snap) PeriodicLaunch(ns, id string) *messages.PeriodicLaunch {
	return first[*messages.PeriodicLaunch](s.txn, tablePeriodicLaunches, idxID, ns, id)
}

// PeriodicLaunches are every periodic job's last launch.
func (s *Snap) PeriodicLaunches() []*messages.PeriodicLaunch {
	return list[*messages.PeriodicLaunch](s.txn, tablePeriodicLaunches, idxID)
}

// PeriodicJobs are the jobs with an enabled periodic block, stopped or
// not (a stopped one launches nothing).
func (s *Snap) PeriodicJobs() []*messages.Job {
	var out []*messages.Job
	for _, j := range s.Jobs() {
		if j.GetPeriodic().GetEnabled() {
			out = append(out, j)
		}
	}
	return out
}

// ChildJobs are the jobs whose ParentID is the job (ns, id): its
// periodic launches and dispatches, oldest first by creation.
func (s *Snap) ChildJobs(ns, id string) []*messages.Job {
	var out []*messages.Job
	for _, j := range s.JobsByNamespace(ns) {
		if j.GetParentID() == id && strings.HasPrefix(j.GetID(), id+"/") {
			out = append(out, j)
		}
	}
	return out
}

// putLaunch records l as its job's last launch; it must be later than
// the one stored.
func (w *writeTxn) putLaunch(l *messages.PeriodicLaunch) error {
	old := w.read().PeriodicLaunch(l.Namespace, l.ID)
	// Children are named after the launch's second, so a launch in the
	// same second as the last one would overwrite its child.
	if old != nil && time.Unix(0, l.Launch).Unix() <= time.Unix(0, old.Launch).Unix() {
		return fmt.Errorf("%w: job %q launch %d, last %d", ErrLaunchNotLater, l.ID, l.Launch, old.Launch)
	}
	l.CreateIndex, l.ModifyIndex = w.index, w.index
	if old != nil {
		l.CreateIndex = old.CreateIndex
	}
	w.insert(tablePeriodicLaunches, l)
	return nil
}

// deleteLaunch forgets a purged job's launches.
func (w *writeTxn) deleteLaunch(ns, id string) {
	if l := w.read().PeriodicLaunch(ns, id); l != nil {
		w.delete(tablePeriodicLaunches, l)
	}
}

func (w *writeTxn) restoreLaunches(ls []*messages.PeriodicLaunch) {
	for _, l := range ls {
		w.insert(tablePeriodicLaunches, l)
	}
}
