package periodic

import (
	"strconv"
	"time"

	"google.golang.org/protobuf/proto"

	"github.com/troupe-dev/troupe/actors/server/evals"
	"github.com/troupe-dev/troupe/cluster/state"
	"github.com/troupe-dev/troupe/messages"
)

// ChildID is the ID of parent's child launched at launch.
func ChildID(parentID string, launch time.Time) string {
	return parentID + state.PeriodicChildInfix + strconv.FormatInt(launch.Unix(), 10)
}

// Child is the job that parent launches at launch: a copy named after
// the launch, without the periodic block, as Nomad derives it.
func Child(parent *messages.Job, launch time.Time) *messages.Job {
	c := proto.Clone(parent).(*messages.Job)
	messages.ClearServerFields(c)
	c.ParentID = parent.GetID()
	c.ID = ChildID(parent.GetID(), launch)
	c.Name = c.ID
	c.Periodic = nil
	return c
}

// ForceTime is when a forced launch of parent at now is recorded: now,
// or the second after the last launch when that was in now's second, so
// the forced child never takes a launched child's name.
func ForceTime(view View, parent *messages.Job, now time.Time) time.Time {
	last := view.PeriodicLaunch(parent.GetNamespace(), parent.GetID())
	if last == nil {
		return now
	}
	if next := time.Unix(time.Unix(0, last.GetLaunch()).Unix()+1, 0); now.Before(next) {
		return next
	}
	return now
}

// LaunchCommand is the one raft command of a launch: the child, its
// evaluation and the parent's launch record.
func LaunchCommand(parent *messages.Job, launch, now time.Time) *messages.Command {
	child := Child(parent, launch)
	return &messages.Command{Time: now.UnixNano(), Cmd: &messages.Command_RegisterJob{RegisterJob: &messages.RegisterJob{
		Job:    child,
		Eval:   evals.ForJob(child, evals.PeriodicJob, now),
		Launch: &messages.PeriodicLaunch{Namespace: parent.GetNamespace(), ID: parent.GetID(), Launch: launch.UnixNano()},
	}}}
}

// Running reports whether a child of the job is not dead: with
// prohibit_overlap it holds back the next launch.
func Running(view View, ns, id string) bool {
	for _, c := range view.ChildJobs(ns, id) {
		if c.GetStatus() != messages.JobStatusDead {
			return true
		}
	}
	return false
}

// View is what launching reads from the state.
type View interface {
	JobByID(ns, id string) *messages.Job
	PeriodicJobs() []*messages.Job
	PeriodicLaunch(ns, id string) *messages.PeriodicLaunch
	ChildJobs(ns, id string) []*messages.Job
}
