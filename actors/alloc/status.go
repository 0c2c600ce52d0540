package alloc

import "github.com/troupe-dev/troupe/messages"

// Client statuses and task states: messages' (status.go), under the
// short names this package uses.
const (
	statusPending  = messages.AllocClientStatusPending
	statusRunning  = messages.AllocClientStatusRunning
	statusComplete = messages.AllocClientStatusComplete
	statusFailed   = messages.AllocClientStatusFailed
	statusLost     = messages.AllocClientStatusLost

	taskPending = messages.TaskStatePending
	taskRunning = messages.TaskStateRunning
	taskDead    = messages.TaskStateDead
)

// clientStatus folds task states into the allocation's client status: failed
// when a task failed, complete when all are dead, running when all started
// ones run, else pending.
func clientStatus(tasks []string, states map[string]*messages.TaskState) string {
	dead, running, failed := 0, 0, false
	for _, name := range tasks {
		st := states[name]
		switch st.GetState() {
		case taskDead:
			dead++
			failed = failed || st.GetFailed()
		case taskRunning:
			running++
		}
	}
	switch {
	case dead == len(tasks) && failed:
		return statusFailed
	case dead == len(tasks):
		return statusComplete
	case failed:
		return statusFailed
	case running > 0 && running+dead == len(tasks):
		return statusRunning
	default:
		return statusPending
	}
}

// terminal reports whether a client status is final.
func terminal(status string) bool { return messages.ClientTerminalStatus(status) }
