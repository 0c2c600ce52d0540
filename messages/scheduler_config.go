package messages

// Scheduler algorithms (SchedulerConfiguration.SchedulerAlgorithm).
const (
	SchedulerAlgorithmBinPack = "binpack" // prefer the fullest node that fits (the default)
	SchedulerAlgorithmSpread  = "spread"  // prefer the emptiest node
)

// DefaultSchedulerConfiguration is the configuration in force while none
// is stored, Nomad's default: bin-packing, and preemption for the system
// scheduler only (not sysbatch, service or batch). The state store
// answers it and the scheduler falls back to it.
func DefaultSchedulerConfiguration() *SchedulerConfiguration {
	return &SchedulerConfiguration{SchedulerAlgorithm: SchedulerAlgorithmBinPack,
		PreemptionConfig: &PreemptionConfig{SystemSchedulerEnabled: true}}
}
