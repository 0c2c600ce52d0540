package alloc

import "github.com/troupe-dev/troupe/messages"

// Client statuses and task states: messages' (status.go), under the
// short names this package uses.
const (
	StatusPending  = messages.AllocClientStatusPending
	StatusRunning  = messages.AllocClientStatusRunning
	StatusComplete = messages.AllocClientStatusComplete
	StatusFailed   = messages.AllocClientStatusFailed
	StatusLost     = messages.AllocClientStatusLost

	TaskPending = messages.TaskStatePending
	TaskRunning = messages.TaskStateRunning
	TaskDead    = messages.TaskStateDead
)

// ClientStatus folds task states into the allocation's client status: failed
// when a task failed, complete when all are dead, running when all started
// ones run, else pending.
func ClientStatus(tasks []string, states map[string]*messages.TaskState) string {
	dead, running, failed := 0, 0, false
	for _, name := range tasks {
		st := states[name]
		switch st.GetState() {
		case TaskDead:
			dead++
			failed = failed || st.GetFailed()
		case TaskRunning:
			running++
		}
	}
	switch {
	case dead == len(tasks) && failed:
		return StatusFailed
	case dead == len(tasks):
		return StatusComplete
	case failed:
		return StatusFailed
	case running > 0 && running+dead == len(tasks):
		return StatusRunning
	default:
		return StatusPending
	}
}

// Terminal reports whether a client status is final.
func Terminal(status string) bool { return messages.ClientTerminalStatus(status) }
