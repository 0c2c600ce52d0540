package alloc

import "github.com/troupe-dev/troupe/actors"

// onLoaded decides how the allocation starts from what the state file
// holds. A failed read waits and reads again: it is never "nothing
// stored", which would start tasks that may already run.
func (l *lifecycle) onLoaded(e Loaded) (effects, error) {
	if l.phase != phaseLoading || l.loadWait {
		return effects{}, l.unexpected(e)
	}
	if e.Err != nil {
		l.loadWait = true
		d, ok := l.loadRetry.Next(&l.tries, e.At) // no deadline: read until it works
		if !ok || d <= 0 {
			d = l.loadRetry.Max
		}
		return effects{RetryIn: d}, nil
	}
	l.tries, l.stop = actors.Tries{}, e.StopWanted
	switch {
	case e.BadName != nil && e.Terminal:
		return l.terminal(effects{Report: true})
	case e.BadName != nil:
		// nothing was made on the host for it, so nothing is torn down
		return l.terminal(effects{Refuse: true, Status: statusFailed, Description: descSetupFailed + e.BadName.Error()})
	case e.Terminal && e.Holding:
		// stopped, but a volume or the network was not let go (an agent
		// restart in the middle): resume that
		return l.teardown(effects{Report: true})
	case e.Terminal:
		return l.terminal(effects{Report: true})
	case e.NoTasks:
		return l.fail(descNoTaskGroup, e.Holding)
	case e.StopWanted && !e.Handles && e.Holding:
		return l.stopBeforeStart(descStoppedEarly)
	case e.StopWanted && !e.Handles:
		return l.terminal(effects{Status: statusComplete, Description: descStoppedEarly, Report: true})
	default:
		return l.prerunFrom(0, effects{})
	}
}

func (l *lifecycle) onHookDone(e HookDone) (effects, error) {
	switch {
	case l.phase == phasePrerun && e.Phase == hookPrerun:
		return l.prerunDone(e)
	case l.phase == phasePostrun && e.Phase == hookPostrun && !l.abandon:
		return l.postrunDone(e)
	case l.phase == phasePostrun && e.Phase == hookAbandon && l.abandon:
		return l.postrunFrom(l.hook-1, effects{})
	}
	return effects{}, l.unexpected(e)
}

// prerunDone goes on to the next hook, or retries, or ends the setup.
func (l *lifecycle) prerunDone(e HookDone) (effects, error) {
	if e.Err == nil {
		return l.prerunFrom(l.hook+1, effects{})
	}
	if r := l.hooks[l.hook].PrerunRetry; r != nil {
		d, ok := r.next(e.Err, &l.tries, e.At)
		if l.stop {
			return l.stopBeforeStart(descStoppedInSetup)
		}
		if ok {
			return effects{RetryIn: d}, l.become(phasePrerunWait)
		}
	}
	return l.fail(descSetupFailed+e.Err.Error(), e.Holding)
}

// postrunDone goes on to the previous hook, or retries, or abandons.
func (l *lifecycle) postrunDone(e HookDone) (effects, error) {
	if e.Err == nil {
		return l.postrunFrom(l.hook-1, effects{})
	}
	plan := l.hooks[l.hook]
	if plan.PostrunRetry != nil {
		if d, ok := plan.PostrunRetry.next(e.Err, &l.tries, e.At); ok {
			return effects{RetryIn: d}, l.become(phasePostrunWait)
		}
	}
	if plan.Abandon {
		l.abandon = true
		return effects{Run: &hookStep{Hook: l.hook, Phase: hookAbandon}}, nil
	}
	return l.postrunFrom(l.hook-1, effects{})
}

func (l *lifecycle) onRetryDue() (effects, error) {
	switch l.phase {
	case phaseLoading:
		if l.loadWait {
			l.loadWait = false
			return effects{Load: true}, nil
		}
	case phasePrerunWait:
		return effects{Run: &hookStep{Hook: l.hook, Phase: hookPrerun}}, l.become(phasePrerun)
	case phasePostrunWait:
		return effects{Run: &hookStep{Hook: l.hook, Phase: hookPostrun}}, l.become(phasePostrun)
	}
	return effects{}, l.unexpected(RetryDue{})
}

// onUpdated records whether a stop is wanted: running tasks are told to
// stop, a setup waiting to retry ends. Before the state file is read the
// update is in what it holds.
func (l *lifecycle) onUpdated(e updated) effects {
	if l.phase == phaseLoading {
		return effects{}
	}
	l.stop = e.StopWanted
	switch {
	case l.phase == phaseRunning && l.stop:
		return l.kill(effects{Update: true}, "allocation stopped: "+e.Description)
	case l.phase == phaseRunning:
		return effects{Update: true}
	case l.phase == phasePrerunWait && l.stop:
		eff, _ := l.stopBeforeStart(descStoppedInSetup) // PrerunWait -> Postrun or Terminal: legal
		return eff
	}
	return effects{}
}

// onTaskDied stops the siblings of a failed task, or of a dead leader.
func (l *lifecycle) onTaskDied(e taskDied) effects {
	switch {
	case l.phase != phaseRunning:
		return effects{}
	case e.Failed:
		return l.kill(effects{}, eventSiblingFailed+": "+e.Task)
	case e.Leader:
		return l.kill(effects{}, "leader task "+e.Task+" is dead")
	case e.MainDead:
		return l.kill(effects{}, eventMainDead)
	}
	return effects{}
}

func (l *lifecycle) onTasksDead() effects {
	if l.phase != phaseRunning && l.phase != phaseStopping {
		return effects{}
	}
	eff, _ := l.teardown(effects{}) // Running, Stopping -> Postrun or Terminal: legal
	return eff
}

// kill tells the running tasks to stop.
func (l *lifecycle) kill(eff effects, reason string) effects {
	eff.KillTasks = reason
	_ = l.become(phaseStopping) // Running -> Stopping: legal
	return eff
}

// prerunFrom runs the prerun of the first hook from i on that has one;
// past the last, the tasks start (and are told to stop when a stop is
// wanted).
func (l *lifecycle) prerunFrom(i int, eff effects) (effects, error) {
	for ; i < len(l.hooks); i++ {
		if l.hooks[i].Prerun {
			l.hook, l.tries = i, actors.Tries{}
			eff.Run = &hookStep{Hook: i, Phase: hookPrerun}
			return eff, l.become(phasePrerun)
		}
	}
	if err := l.become(phaseRunning); err != nil {
		return effects{}, err
	}
	eff.StartTasks = true
	if l.stop {
		eff = l.kill(eff, "allocation stopped")
	}
	return eff, nil
}

// teardown runs every hook's postrun, the last hook's first.
func (l *lifecycle) teardown(eff effects) (effects, error) {
	return l.postrunFrom(len(l.hooks)-1, eff)
}

// postrunFrom runs the postrun of the last hook up to i that has one;
// before the first, the allocation is terminal.
func (l *lifecycle) postrunFrom(i int, eff effects) (effects, error) {
	l.abandon = false
	for ; i >= 0; i-- {
		if l.hooks[i].Postrun {
			l.hook, l.tries = i, actors.Tries{}
			eff.Run = &hookStep{Hook: i, Phase: hookPostrun}
			return eff, l.become(phasePostrun)
		}
	}
	eff.Report = true
	return l.terminal(eff)
}

// fail ends an allocation whose tasks never ran; what it holds is torn
// down first.
func (l *lifecycle) fail(why string, holding bool) (effects, error) {
	eff := effects{FailTasks: true, Status: statusFailed, Description: why}
	if holding {
		return l.teardown(eff)
	}
	return l.terminal(eff)
}

// stopBeforeStart ends an allocation stopped during its setup: nothing
// ran, and what the setup took is let go.
func (l *lifecycle) stopBeforeStart(why string) (effects, error) {
	eff := effects{StopTimer: l.phase == phasePrerunWait, Status: statusComplete, Description: why}
	return l.teardown(eff)
}

func (l *lifecycle) terminal(eff effects) (effects, error) {
	eff.Released = true
	return eff, l.become(phaseTerminal)
}
