package alloc

import (
	"time"

	"github.com/troupe-dev/troupe/messages"
	"github.com/troupe-dev/troupe/runtime/driver"
)

// Task event types, as Nomad names them.
const (
	eventReceived      = "Received"
	eventStarted       = "Started"
	eventTerminated    = "Terminated"
	eventRestarting    = "Restarting"
	eventNotRestarting = "Not Restarting"
	eventKilling       = "Killing"
	eventKilled        = "Killed"
	eventDriverFailure = "Driver Failure"
	eventReattached    = "Reattached"
	eventSiblingFailed = "Sibling Task Failed"
)

// oomKilledMessage is a Terminated event's message (and display message)
// when the kernel OOM-killed the task, as Nomad reports it.
const oomKilledMessage = "OOM Killed"

// maxEvents bounds the events kept per task, as Nomad does.
const maxEvents = 10

func newEvent(typ, msg string, now time.Time) *messages.TaskEvent {
	return &messages.TaskEvent{Type: typ, Time: now.UnixNano(), Message: msg, DisplayMessage: displayMessage(typ, msg)}
}

func exitEvent(res *driver.ExitResult, now time.Time) *messages.TaskEvent {
	ev := newEvent(eventTerminated, exitReason(res), now)
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
	case typ == eventReceived:
		return "Task received by client"
	case typ == eventStarted:
		return "Task started by client"
	case typ == eventKilled:
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
	st.State, st.Failed, st.FinishedAt = taskDead, true, rfc3339(now)
	appendEvent(st, newEvent(eventSetupFailure, why, now))
	return st
}
