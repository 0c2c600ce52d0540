package alloc

import (
	"time"

	"github.com/troupe-dev/troupe/messages"
	"github.com/troupe-dev/troupe/runtime/driver"
)

// Task event types, as Nomad names them.
const (
	EventReceived      = "Received"
	EventStarted       = "Started"
	EventTerminated    = "Terminated"
	EventRestarting    = "Restarting"
	EventNotRestarting = "Not Restarting"
	EventKilling       = "Killing"
	EventKilled        = "Killed"
	EventDriverFailure = "Driver Failure"
	EventReattached    = "Reattached"
	EventSiblingFailed = "Sibling Task Failed"
)

// maxEvents bounds the events kept per task, as Nomad does.
const maxEvents = 10

func newEvent(typ, msg string, now time.Time) *messages.TaskEvent {
	return &messages.TaskEvent{Type: typ, Time: now.UnixNano(), Message: msg, DisplayMessage: displayMessage(typ, msg)}
}

func exitEvent(res *driver.ExitResult, now time.Time) *messages.TaskEvent {
	ev := newEvent(EventTerminated, exitReason(res), now)
	ev.ExitCode = int32(res.ExitCode)
	ev.Signal = int32(res.Signal)
	if res.OOMKilled {
		ev.Details = map[string]string{"oom_killed": "true"}
	}
	return ev
}

func displayMessage(typ, msg string) string {
	switch {
	case msg != "":
		return msg
	case typ == EventReceived:
		return "Task received by client"
	case typ == EventStarted:
		return "Task started by client"
	case typ == EventKilled:
		return "Task successfully killed"
	}
	return typ
}

func appendEvent(st *messages.TaskState, ev *messages.TaskEvent) {
	st.Events = append(st.Events, ev)
	if len(st.Events) > maxEvents {
		st.Events = st.Events[len(st.Events)-maxEvents:]
	}
}

func rfc3339(t time.Time) string { return t.UTC().Format(time.RFC3339Nano) }

// setupFailedState is the state of a task that never started because the
// allocation's setup failed: dead, failed, with the reason as its event.
func setupFailedState(st *messages.TaskState, why string, now time.Time) *messages.TaskState {
	if st == nil {
		st = &messages.TaskState{}
	}
	st.State, st.Failed, st.FinishedAt = TaskDead, true, rfc3339(now)
	appendEvent(st, newEvent(EventSetupFailure, why, now))
	return st
}
