package state

import "github.com/troupe-dev/troupe/messages"

// applyClientAllocs merges what clients own of their allocations (status,
// description, task states, network status) and stores follow-up evals.
// Unknown allocation IDs are skipped, so a re-sent batch is harmless.
func applyClientAllocs(w *writeTxn, c *messages.UpdateAllocsFromClient) any {
	for _, upd := range c.GetAllocs() {
		old := w.read().AllocByID(upd.ID)
		if old == nil {
			continue
		}
		a := copyAlloc(old)
		// A lost allocation was replaced: a late report that it runs must
		// not revive it (the client is told to stop it).
		revive := old.ClientStatus == messages.AllocClientStatusLost && !upd.ClientTerminalStatus()
		if upd.ClientStatus != "" && !revive {
			a.ClientStatus = upd.ClientStatus
		}
		a.ClientDescription = upd.ClientDescription
		if upd.TaskStates != nil {
			a.TaskStates = upd.TaskStates
		}
		if upd.NetworkStatus != nil {
			a.NetworkStatus = upd.NetworkStatus
		}
		if upd.VolumeStates != nil {
			a.VolumeStates = upd.VolumeStates
		}
		mergeClientHealth(a, upd)
		a.ModifyTime = upd.ModifyTime
		if a.ModifyTime == 0 {
			a.ModifyTime = w.now
		}
		a.ModifyIndex = w.index
		w.putAlloc(old, a)
		w.clientServices(upd, a)
	}
	w.putEvals(c.GetEvals())
	return nil
}
