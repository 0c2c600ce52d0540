package jobspec

import (
	"fmt"
	"slices"
	"strings"

	"github.com/troupe-dev/troupe/messages"
	"github.com/troupe-dev/troupe/runtime/driver"
)

// KnownDrivers are the task drivers troupe has.
var KnownDrivers = []string{"exec", "raw_exec", "containerd", "qemu", "java"}

// checker collects problems, each prefixed with the path of what it is in.
type checker struct {
	problems *[]string
	prefix   string
	limits   Limits
}

// at returns a checker for a nested element, e.g. at("group %q", name).
func (c checker) at(format string, args ...any) checker {
	return checker{c.problems, c.prefix + fmt.Sprintf(format, args...) + ": ", c.limits}
}

func (c checker) addf(format string, args ...any) {
	*c.problems = append(*c.problems, c.prefix+fmt.Sprintf(format, args...))
}

// Validate checks a job, normally after Canonicalize, and returns nil or a
// *ValidationError listing every problem found, each naming its field path
// (`group "web": task "server": resources.memory must be greater than 0`).
// It applies the default Limits; ValidateLimits takes a server's own.
func Validate(job *messages.Job) error {
	return ValidateLimits(job, Limits{})
}

// ValidateLimits is Validate with the limits l (unset fields at their
// defaults).
func ValidateLimits(job *messages.Job, l Limits) error {
	var problems []string
	c := checker{problems: &problems, limits: l.WithDefaults()}
	if job == nil {
		c.addf("job is missing")
	} else {
		validateJob(c, job)
	}
	if len(problems) == 0 {
		return nil
	}
	return &ValidationError{Problems: problems}
}

func validateJob(c checker, job *messages.Job) {
	l := c.lim()
	validateID(c, job.ID)
	for _, f := range [][2]string{{"name", job.Name}, {"namespace", job.Namespace}, {"region", job.Region}} {
		if f[1] == "" {
			c.addf("%s must not be empty", f[0])
		} else if p := textProblem(f[1], l.MaxNameLength); p != "" {
			c.addf("%s %s", f[0], p)
		}
	}
	checkStringMap(c, "meta", job.Meta, l, false)
	if !slices.Contains([]string{TypeService, TypeBatch, TypeSystem}, job.Type) {
		c.addf("type %q is not one of service, batch, system", job.Type)
	}
	if job.Priority < 1 || job.Priority > 100 {
		c.addf("priority %d must be between 1 and 100", job.Priority)
	}
	if len(job.Datacenters) == 0 {
		c.addf("datacenters must list at least one datacenter")
	}
	for i, dc := range job.Datacenters {
		if dc == "" {
			c.addf("datacenters[%d] must not be empty", i)
		} else if p := textProblem(dc, l.MaxNameLength); p != "" {
			c.addf("datacenters[%d] %s", i, p)
		}
	}
	validateConstraints(c, "constraint", job.Constraints)
	validateAffinities(c, job.Affinities)
	validateSpreads(c, job.Spreads)
	validatePeriodic(c, job)
	validateParameterized(c, job)
	validateMultiregion(c, job)
	validateDispatchPayloads(c, job)
	validateUpdate(c.at("update"), job.Type, job.Update, false)
	if len(job.TaskGroups) == 0 {
		c.addf("job must have at least one group")
	}
	seen := map[string]bool{}
	var total int64
	for i, g := range job.TaskGroups {
		if g == nil {
			c.addf("group[%d] is missing", i)
			continue
		}
		total += int64(max(g.Count, 0))
		gc := c.at("group %s", shown(g.Name))
		if g.Name == "" {
			gc = c.at("group[%d]", i)
			gc.addf("name must not be empty")
		} else if p := nameProblem(g.Name, l.MaxNameLength); p != "" {
			gc = c.at("group[%d]", i)
			gc.addf("name %s %s", shown(g.Name), p)
		} else if seen[g.Name] {
			gc.addf("group name is not unique")
		}
		seen[g.Name] = true
		validateGroup(gc, job.Type, g)
	}
	if total > int64(l.JobMaxCount) {
		c.addf("the groups' counts add up to %d allocations, over the job_max_count limit of %d", total, l.JobMaxCount)
	}
}

func validateID(c checker, id string) {
	if id == "" {
		c.addf("id must not be empty")
	} else if p := idProblem(id, c.lim().MaxNameLength); p == problemSpaces {
		c.addf("id %s %s", shown(id), p)
	} else if p != "" {
		c.addf("id %s", p)
	}
}

func validateGroup(c checker, typ string, g *messages.TaskGroup) {
	if g.Count < 0 {
		c.addf("count %d must not be negative", g.Count)
	} else if int(g.Count) > c.lim().JobMaxCount {
		c.addf("count %d is over the job_max_count limit of %d", g.Count, c.lim().JobMaxCount)
	}
	checkStringMap(c, "meta", g.Meta, c.lim(), false)
	if typ == TypeSystem && g.Count > 1 {
		c.addf("count %d: system jobs run at most one allocation per node; count must be 0 or 1", g.Count)
	}
	if typ == TypeSystem && g.ReschedulePolicy != nil {
		c.addf("reschedule: system jobs are not rescheduled; remove the reschedule block")
	}
	if g.StopAfterClientDisconnect < 0 {
		c.addf("stop_after_client_disconnect must not be negative")
	}
	validateConstraints(c, "constraint", g.Constraints)
	validateAffinities(c, g.Affinities)
	validateSpreads(c, g.Spreads)
	validateRestart(c.at("restart"), g.RestartPolicy)
	validateReschedule(c.at("reschedule"), g.ReschedulePolicy)
	validateMigrate(c.at("migrate"), g.Migrate)
	validateDisconnect(c.at("disconnect"), g.Disconnect)
	validateUpdate(c.at("update"), typ, g.Update, true)
	validateNetworks(c, g.Networks)
	validateVolumes(c, g)
	validateGroupServices(c, g)
	if len(g.Tasks) == 0 {
		c.addf("group must have at least one task")
	}
	seen := map[string]bool{}
	for i, t := range g.Tasks {
		if t == nil {
			c.addf("task[%d] is missing", i)
			continue
		}
		tc := c.at("task %s", shown(t.Name))
		if t.Name == "" {
			tc = c.at("task[%d]", i)
			tc.addf("name must not be empty")
		} else if p := nameProblem(t.Name, c.lim().MaxNameLength); p != "" {
			tc = c.at("task[%d]", i)
			tc.addf("name %s %s", shown(t.Name), p)
		} else if seen[t.Name] {
			tc.addf("task name is not unique")
		}
		seen[t.Name] = true
		validateTask(tc, g, t)
	}
	validateLifecycles(c, g)
}

func validateTask(c checker, g *messages.TaskGroup, t *messages.Task) {
	if !slices.Contains(KnownDrivers, t.Driver) {
		c.addf("driver: unknown driver %s (known: %s)", shown(t.Driver), strings.Join(KnownDrivers, ", "))
	}
	if t.Driver == "exec" || t.Driver == "raw_exec" {
		if cmd := t.Config.GetFields()["command"]; cmd.GetStringValue() == "" {
			c.addf("config.command must be set to a non-empty string for the %s driver", t.Driver)
		}
	}
	if t.Driver == "qemu" {
		validateQemu(c, g, t)
	}
	if t.Driver == "java" {
		validateJava(c, t)
	}
	if t.KillTimeout < 0 {
		c.addf("kill_timeout must not be negative")
	}
	if t.KillSignal != "" {
		if _, err := driver.ParseSignal(t.KillSignal); err != nil {
			c.addf("kill_signal %s is not a signal (SIGTERM, SIGINT, SIGQUIT, SIGUSR1, ... or a number 1-64)", shown(t.KillSignal))
		}
	}
	if p := textProblem(t.User, c.lim().MaxNameLength); p != "" {
		c.addf("user %s", p)
	}
	checkStringMap(c, "env", t.Env, c.lim(), true)
	checkStringMap(c, "meta", t.Meta, c.lim(), false)
	validateResources(c, t.Resources)
	validateConstraints(c, "constraint", t.Constraints)
	validateAffinities(c, t.Affinities)
	validateRestart(c.at("restart"), t.RestartPolicy)
	if lc := t.LogConfig; lc != nil {
		if lc.MaxFiles < 1 {
			c.addf("logs.max_files must be at least 1")
		}
		if lc.MaxFileSizeMB < 1 {
			c.addf("logs.max_file_size must be at least 1")
		}
	}
	for i, vm := range t.VolumeMounts {
		validateVolumeMount(c.at("volume_mount[%d]", i), g, vm)
	}
	if t.CSIPluginConfig != nil {
		validateCSIPlugin(c.at("csi_plugin"), t.CSIPluginConfig)
	}
	if t.Lifecycle != nil {
		validateLifecycle(c.at("lifecycle"), t.Lifecycle)
	}
	for i, a := range t.Artifacts {
		validateArtifact(c.at("artifact[%d]", i), a)
	}
	validateTemplates(c, t.Templates)
	validateIdentities(c, t)
}

func validateResources(c checker, r *messages.Resources) {
	if r == nil {
		c.addf("resources must be set")
		return
	}
	switch {
	case r.Cores > 0 && r.CPU > 0:
		c.addf("resources: a task can ask for cpu or cores, not both (cpu %d, cores %d)", r.CPU, r.Cores)
	case r.Cores <= 0 && r.CPU <= 0:
		c.addf("resources.cpu must be greater than 0")
	}
	if r.MemoryMB <= 0 {
		c.addf("resources.memory must be greater than 0")
	}
	if r.MemoryMaxMB != 0 && r.MemoryMaxMB < r.MemoryMB {
		c.addf("resources.memory_max (%d) must be 0 or at least resources.memory (%d)", r.MemoryMaxMB, r.MemoryMB)
	}
	if r.Cores < 0 {
		c.addf("resources.cores must not be negative")
	}
	if r.DiskMB < 0 {
		c.addf("resources.disk must not be negative")
	}
	validateNetworks(c.at("resources"), r.Networks)
	for i, dev := range r.Devices {
		if dev == nil || dev.Name == "" {
			c.at("resources.device[%d]", i).addf("name must not be empty")
			continue
		}
		validateDevice(c.at("resources.device %q", dev.Name), dev)
	}
}

// lim is the checker's limits with the defaults filled in (a checker made
// without limits applies the defaults).
func (c checker) lim() Limits { return c.limits.WithDefaults() }
