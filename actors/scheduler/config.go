package scheduler

import (
	"github.com/troupe-dev/troupe/messages"
)

// SchedulerConfigSource may be implemented by a Snapshot that holds the
// operator's scheduler configuration (the state store does, answering its
// defaults when none is stored). Process reads it once per evaluation;
// without it, DefaultConfig is in force.
type SchedulerConfigSource interface {
	SchedulerConfig() *messages.SchedulerConfiguration
}

// defaultConfig is messages.DefaultSchedulerConfiguration made once;
// configOf hands it out, so it is never changed.
var defaultConfig = messages.DefaultSchedulerConfiguration()

// configOf is the scheduler configuration snap holds, or the default configuration.
// The result is shared: do not change it.
func configOf(snap Snapshot) *messages.SchedulerConfiguration {
	if src, ok := snap.(SchedulerConfigSource); ok {
		if c := src.SchedulerConfig(); c != nil {
			return c
		}
	}
	return defaultConfig
}

// preemptionEnabled says whether the scheduler of jobType may evict
// lower-priority allocations under c.
func preemptionEnabled(c *messages.SchedulerConfiguration, jobType string) bool {
	pc := c.GetPreemptionConfig()
	switch jobType {
	case jobTypeSystem:
		return pc.GetSystemSchedulerEnabled()
	case jobTypeSysBatch:
		return pc.GetSysBatchSchedulerEnabled()
	case jobTypeBatch:
		return pc.GetBatchSchedulerEnabled()
	}
	return pc.GetServiceSchedulerEnabled()
}

// configure reads the evaluation's scheduler configuration: the algorithm
// ranking reads (unless the caller set Options.SchedulerAlgorithm), and
// whether this job's scheduler preempts.
func (p *planner) configure() {
	p.config = configOf(p.snap)
	if p.opts.SchedulerAlgorithm == "" {
		p.opts.SchedulerAlgorithm = p.config.GetSchedulerAlgorithm()
	}
	if p.opts.SchedulerAlgorithm == "" {
		p.opts.SchedulerAlgorithm = algorithmBinPack
	}
	p.preemption = p.job != nil && preemptionEnabled(p.config, p.job.GetType())
}

// allocated is the AllocatedResources of a new alloc of tg. Without
// memory oversubscription a task's memory_max is ignored, as in Nomad:
// the allocation gets no MemoryMaxMB, so its tasks are held to MemoryMB.
func (p *planner) allocated(tg *messages.TaskGroup) *messages.AllocatedResources {
	ar := allocated(tg)
	if !p.config.GetMemoryOversubscriptionEnabled() {
		for _, t := range ar.Tasks {
			t.Memory.MemoryMaxMB = 0
		}
	}
	return ar
}

// ConfigChanged tells the scheduler actor that the scheduler
// configuration was set: a paused scheduler (PauseEvalBroker) resumes
// planning the evaluations it holds once the pause is lifted.
type ConfigChanged struct{}

// paused reads whether the configuration pauses planning. Evaluations
// keep arriving and wait in the queue, in order, meanwhile, as they wait
// in Nomad's paused eval broker.
func (a *Actor) paused() bool {
	held := configOf(a.spec.State()).GetPauseEvalBroker()
	if held != a.held {
		a.log.Info("scheduler configuration changed planning", "paused", held, "queued", len(a.queue))
		a.held = held
	}
	return held
}
