package alloc

import "github.com/troupe-dev/troupe/actors"

// onLoaded decides how the allocation starts from what the state file
// holds. A failed read waits and reads again: it is never "nothing
// stored", which would start tasks that may already run.
func (l *Lifecycle) onLoaded(e Loaded) (Effects, error) {
	if l.phase != PhaseLoading || l.loadWait {
		return Effects{}, l.unexpected(e)
	}
	if e.Err != nil {
		l.loadWait = true
		d, ok := l.loadRetry.Next(&l.tries, e.At) // no deadline: read until it works
		if !ok || d <= 0 {
			d = l.loadRetry.Max
		}
		return Effects{RetryIn: d}, nil
	}
	l.tries, l.stop = actors.Tries{}, e.StopWanted
	switch {
	case e.BadName != nil && e.Terminal:
		return l.terminal(Effects{Report: true})
	case e.BadName != nil:
		// nothing was made on the host for it, so nothing is torn down
		return l.terminal(Effects{Refuse: true, Status: StatusFailed, Description: DescSetupFailed + e.BadName.Error()})
	case e.Terminal && e.Holding:
		// stopped, but a volume or the network was not let go (an agent
		// restart in the middle): resume that
		return l.teardown(Effects{Report: true})
	case e.Terminal:
		return l.terminal(Effects{Report: true})
	case e.NoTasks:
		return l.fail(DescNoTaskGroup, e.Holding)
	case e.StopWanted && !e.Handles && e.Holding:
		return l.stopBeforeStart(DescStoppedEarly)
	case e.StopWanted && !e.Handles:
		return l.terminal(Effects{Status: StatusComplete, Description: DescStoppedEarly, Report: true})
	default:
		return l.prerunFrom(0, Effects{})
	}
}

func (l *Lifecycle) onHookDone(e HookDone) (Effects, error) {
	switch {
	case l.phase == PhasePrerun && e.Phase == HookPrerun:
		return l.prerunDone(e)
	case l.phase == PhasePostrun && e.Phase == HookPostrun && !l.abandon:
		return l.postrunDone(e)
	case l.phase == PhasePostrun && e.Phase == HookAbandon && l.abandon:
		return l.postrunFrom(l.hook-1, Effects{})
	}
	return Effects{}, l.unexpected(e)
}

// prerunDone goes on to the next hook, or retries, or ends the setup.
func (l *Lifecycle) prerunDone(e HookDone) (Effects, error) {
	if e.Err == nil {
		return l.prerunFrom(l.hook+1, Effects{})
	}
	if r := l.hooks[l.hook].PrerunRetry; r != nil {
		d, ok := r.next(e.Err, &l.tries, e.At)
		if l.stop {
			return l.stopBeforeStart(DescStoppedInSetup)
		}
		if ok {
			return Effects{RetryIn: d}, l.become(PhasePrerunWait)
		}
	}
	return l.fail(DescSetupFailed+e.Err.Error(), e.Holding)
}

// postrunDone goes on to the previous hook, or retries, or abandons.
func (l *Lifecycle) postrunDone(e HookDone) (Effects, error) {
	if e.Err == nil {
		return l.postrunFrom(l.hook-1, Effects{})
	}
	plan := l.hooks[l.hook]
	if plan.PostrunRetry != nil {
		if d, ok := plan.PostrunRetry.next(e.Err, &l.tries, e.At); ok {
			return Effects{RetryIn: d}, l.become(PhasePostrunWait)
		}
	}
	if plan.Abandon {
		l.abandon = true
		return Effects{Run: &HookStep{Hook: l.hook, Phase: HookAbandon}}, nil
	}
	return l.postrunFrom(l.hook-1, Effects{})
}

func (l *Lifecycle) onRetryDue() (Effects, error) {
	switch l.phase {
	case PhaseLoading:
		if l.loadWait {
			l.loadWait = false
			return Effects{Load: true}, nil
		}
	case PhasePrerunWait:
		return Effects{Run: &HookStep{Hook: l.hook, Phase: HookPrerun}}, l.become(PhasePrerun)
	case PhasePostrunWait:
		return Effects{Run: &HookStep{Hook: l.hook, Phase: HookPostrun}}, l.become(PhasePostrun)
	}
	return Effects{}, l.unexpected(RetryDue{})
}

// onUpdated records whether a stop is wanted: running tasks are told to
// stop, a setup waiting to retry ends. Before the state file is read the
// update is in what it holds.
func (l *Lifecycle) onUpdated(e Updated) Effects {
	if l.phase == PhaseLoading {
		return Effects{}
	}
	l.stop = e.StopWanted
	switch {
	case l.phase == PhaseRunning && l.stop:
		return l.kill(Effects{Update: true}, "allocation stopped: "+e.Description)
	case l.phase == PhaseRunning:
		return Effects{Update: true}
	case l.phase == PhasePrerunWait && l.stop:
		eff, _ := l.stopBeforeStart(DescStoppedInSetup) // PrerunWait -> Postrun or Terminal: legal
		return eff
	}
	return Effects{}
}

// onTaskDied stops the siblings of a failed task, or of a dead leader.
func (l *Lifecycle) onTaskDied(e TaskDied) Effects {
	switch {
	case l.phase != PhaseRunning:
		return Effects{}
	case e.Failed:
		return l.kill(Effects{}, EventSiblingFailed+": "+e.Task)
	case e.Leader:
		return l.kill(Effects{}, "leader task "+e.Task+" is dead")
	}
	return Effects{}
}

func (l *Lifecycle) onTasksDead() Effects {
	if l.phase != PhaseRunning && l.phase != PhaseStopping {
		return Effects{}
	}
	eff, _ := l.teardown(Effects{}) // Running, Stopping -> Postrun or Terminal: legal
	return eff
}

// kill tells the running tasks to stop.
func (l *Lifecycle) kill(eff Effects, reason string) Effects {
	eff.KillTasks = reason
	_ = l.become(PhaseStopping) // Running -> Stopping: legal
	return eff
}

// prerunFrom runs the prerun of the first hook from i on that has one;
// past the last, the tasks start (and are told to stop when a stop is
// wanted).
func (l *Lifecycle) prerunFrom(i int, eff Effects) (Effects, error) {
	for ; i < len(l.hooks); i++ {
		if l.hooks[i].Prerun {
			l.hook, l.tries = i, actors.Tries{}
			eff.Run = &HookStep{Hook: i, Phase: HookPrerun}
			return eff, l.become(PhasePrerun)
		}
	}
	if err := l.become(PhaseRunning); err != nil {
		return Effects{}, err
	}
	eff.StartTasks = true
	if l.stop {
		eff = l.kill(eff, "allocation stopped")
	}
	return eff, nil
}

// teardown runs every hook's postrun, the last hook's first.
func (l *Lifecycle) teardown(eff Effects) (Effects, error) {
	return l.postrunFrom(len(l.hooks)-1, eff)
}

// postrunFrom runs the postrun of the last hook up to i that has one;
// before the first, the allocation is terminal.
func (l *Lifecycle) postrunFrom(i int, eff Effects) (Effects, error) {
	l.abandon = false
	for ; i >= 0; i-- {
		if l.hooks[i].Postrun {
			l.hook, l.tries = i, actors.Tries{}
			eff.Run = &HookStep{Hook: i, Phase: HookPostrun}
			return eff, l.become(PhasePostrun)
		}
	}
	eff.Report = true
	return l.terminal(eff)
}

// fail ends an allocation whose tasks never ran; what it holds is torn
// down first.
func (l *Lifecycle) fail(why string, holding bool) (Effects, error) {
	eff := Effects{FailTasks: true, Status: StatusFailed, Description: why}
	if holding {
		return l.teardown(eff)
	}
	return l.terminal(eff)
}

// stopBeforeStart ends an allocation stopped during its setup: nothing
// ran, and what the setup took is let go.
func (l *Lifecycle) stopBeforeStart(why string) (Effects, error) {
	eff := Effects{StopTimer: l.phase == PhasePrerunWait, Status: StatusComplete, Description: why}
	return l.teardown(eff)
}

func (l *Lifecycle) terminal(eff Effects) (Effects, error) {
	eff.Released = true
	return eff, l.become(PhaseTerminal)
}
