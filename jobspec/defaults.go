package jobspec

import (
	"time"

	"github.com/troupe-dev/troupe/messages"
	"google.golang.org/protobuf/proto"
)

// Job types.
const (
	TypeService = "service"
	TypeBatch   = "batch"
	TypeSystem  = "system"
)

// Nomad's defaults.
const (
	defaultNamespace   = "default"
	defaultRegion      = "global"
	defaultNodePool    = "default"
	defaultPriority    = 50
	defaultCPU         = 100
	defaultMemoryMB    = 300
	defaultKillTimeout = int64(5 * time.Second)
	defaultLogFiles    = 10
	defaultLogFileMB   = 10
	defaultWeight      = 50
	defaultOperand     = "="
	defaultNetworkMode = "host"
	defaultReconcile   = "best_score"

	defaultCSIMountDir      = "/csi"
	defaultCSIStageBaseDir  = "/local/csi"
	defaultCSIHealthTimeout = int64(30 * time.Second)
)

func jobType(job *messages.Job) string {
	if job.GetType() == "" {
		return TypeService
	}
	return job.GetType()
}

// defaultRestart is the restart policy of a job type (Nomad's
// DefaultServiceJobRestartPolicy / DefaultBatchJobRestartPolicy).
func defaultRestart(typ string) *messages.RestartPolicy {
	if typ == TypeBatch {
		return &messages.RestartPolicy{Attempts: 3, Interval: int64(24 * time.Hour),
			Delay: int64(15 * time.Second), Mode: "fail"}
	}
	return &messages.RestartPolicy{Attempts: 2, Interval: int64(30 * time.Minute),
		Delay: int64(15 * time.Second), Mode: "fail"}
}

// defaultReschedule is the reschedule policy of a job type; system jobs are
// not rescheduled (nil).
func defaultReschedule(typ string) *messages.ReschedulePolicy {
	switch typ {
	case TypeService:
		return &messages.ReschedulePolicy{Delay: int64(30 * time.Second),
			DelayFunction: "exponential", MaxDelay: int64(time.Hour), Unlimited: true}
	case TypeBatch:
		return &messages.ReschedulePolicy{Attempts: 1, Interval: int64(24 * time.Hour),
			Delay: int64(5 * time.Second), DelayFunction: "constant"}
	}
	return nil
}

func defaultMigrate() *messages.MigrateStrategy {
	return &messages.MigrateStrategy{MaxParallel: 1, HealthCheck: "checks",
		MinHealthyTime: int64(10 * time.Second), HealthyDeadline: int64(5 * time.Minute)}
}

// Canonicalize fills Nomad's defaults in place: namespace, region,
// datacenters ["*"], type, priority, name, node pool "default"; affinity
// operators ("=") and weights (50) and spread weights (50) at every level;
// per group the restart,
// reschedule (not for system jobs) and migrate (service jobs) policies when
// absent; per task the group's restart policy, kill timeout, resources
// (cpu 100, memory 300), log config; constraint operands and network modes.
//
// A group's count cannot be told apart from an explicit 0 here, so Parse
// and ParseJSON set count 1 when the file leaves it out. Canonicalize is
// idempotent.
func Canonicalize(job *messages.Job) {
	if job == nil {
		return
	}
	setDefault(&job.Namespace, defaultNamespace)
	setDefault(&job.Region, defaultRegion)
	setDefault(&job.Type, TypeService)
	setDefault(&job.Name, job.ID)
	setDefault(&job.NodePool, defaultNodePool)
	if job.Priority == 0 {
		job.Priority = defaultPriority
	}
	if len(job.Datacenters) == 0 {
		job.Datacenters = []string{"*"}
	}
	canonConstraints(job.Constraints)
	canonAffinities(job.Affinities)
	canonSpreads(job.Spreads)
	canonPeriodic(job.Periodic)
	canonParameterized(job.ParameterizedJob)
	if len(job.GetMultiregion().GetRegions()) == 0 {
		job.Multiregion = nil // Nomad's client sends an empty block
	}
	canonUpdate(job.Update)
	for _, g := range job.TaskGroups {
		if g != nil {
			canonGroup(job.Type, g)
		}
	}
	canonServices(job)
}

func canonGroup(typ string, g *messages.TaskGroup) {
	canonConstraints(g.Constraints)
	canonAffinities(g.Affinities)
	canonSpreads(g.Spreads)
	if g.RestartPolicy == nil {
		g.RestartPolicy = defaultRestart(typ)
	}
	setDefault(&g.RestartPolicy.Mode, "fail")
	if g.ReschedulePolicy == nil {
		g.ReschedulePolicy = defaultReschedule(typ)
	}
	if rp, def := g.ReschedulePolicy, defaultReschedule(typ); rp != nil && def != nil {
		setDefault(&rp.DelayFunction, def.DelayFunction)
	}
	if g.Migrate == nil && typ == TypeService {
		g.Migrate = defaultMigrate()
	}
	if g.Migrate != nil {
		setDefault(&g.Migrate.HealthCheck, "checks")
	}
	canonUpdate(g.Update)
	if g.Disconnect != nil {
		setDefault(&g.Disconnect.Reconcile, defaultReconcile)
	}
	canonNetworks(g.Networks)
	for name, v := range g.Volumes {
		if v != nil {
			setDefault(&v.Name, name)
		}
	}
	for _, t := range g.Tasks {
		if t != nil {
			canonTask(g, t)
		}
	}
}

func canonTask(g *messages.TaskGroup, t *messages.Task) {
	canonConstraints(t.Constraints)
	canonAffinities(t.Affinities)
	if t.RestartPolicy == nil {
		t.RestartPolicy = proto.Clone(g.RestartPolicy).(*messages.RestartPolicy)
	}
	setDefault(&t.RestartPolicy.Mode, "fail")
	if t.KillTimeout == 0 {
		t.KillTimeout = defaultKillTimeout
	}
	if t.Resources == nil {
		t.Resources = &messages.Resources{CPU: defaultCPU, MemoryMB: defaultMemoryMB}
	}
	canonNetworks(t.Resources.Networks)
	for _, dev := range t.Resources.Devices {
		canonDevice(dev)
	}
	if t.LogConfig == nil {
		t.LogConfig = &messages.LogConfig{}
	}
	if t.LogConfig.MaxFiles == 0 {
		t.LogConfig.MaxFiles = defaultLogFiles
	}
	if t.LogConfig.MaxFileSizeMB == 0 {
		t.LogConfig.MaxFileSizeMB = defaultLogFileMB
	}
	canonCSIPlugin(t.CSIPluginConfig)
	for _, a := range t.Artifacts {
		canonArtifact(a)
	}
	canonTemplates(t.Templates)
	canonIdentities(t)
}

// canonCSIPlugin fills Nomad's csi_plugin defaults: mount_dir /csi,
// stage_publish_base_dir /local/csi, health_timeout 30s.
func canonCSIPlugin(pc *messages.CSIPluginConfig) {
	if pc == nil {
		return
	}
	setDefault(&pc.MountDir, defaultCSIMountDir)
	setDefault(&pc.StagePublishBaseDir, defaultCSIStageBaseDir)
	if pc.HealthTimeout == 0 {
		pc.HealthTimeout = defaultCSIHealthTimeout
	}
}

func canonDevice(dev *messages.RequestedDevice) {
	if dev == nil {
		return
	}
	if dev.Count == 0 {
		dev.Count = 1
	}
	canonConstraints(dev.Constraints)
	canonAffinities(dev.Affinities)
}

// canonAffinities fills Nomad's affinity defaults: operator "=", weight 50.
func canonAffinities(affs []*messages.Affinity) {
	for _, a := range affs {
		if a == nil {
			continue
		}
		setDefault(&a.Operand, defaultOperand)
		if a.Weight == 0 {
			a.Weight = defaultWeight
		}
	}
}

// canonSpreads fills Nomad's spread default: weight 50.
func canonSpreads(spreads []*messages.Spread) {
	for _, sp := range spreads {
		if sp != nil && sp.Weight == 0 {
			sp.Weight = defaultWeight
		}
	}
}

func canonConstraints(cs []*messages.Constraint) {
	for _, c := range cs {
		if c != nil {
			setDefault(&c.Operand, defaultOperand)
		}
	}
}

func canonNetworks(ns []*messages.NetworkResource) {
	for _, n := range ns {
		if n != nil {
			setDefault(&n.Mode, defaultNetworkMode)
		}
	}
}

func setDefault(s *string, def string) {
	if *s == "" {
		*s = def
	}
}
