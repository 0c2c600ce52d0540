package jobspec

import (
	"strings"

	"github.com/troupe-dev/troupe/messages"
	"google.golang.org/protobuf/proto"
)

// The proto messages cannot tell an absent field from a zero one, yet Nomad's
// defaults depend on that difference (count = 0 stays 0; a restart block
// that sets only mode keeps the default attempts). So the parsers record
// which fields a job file set, and applyPresence merges partial blocks over
// the defaults right after decoding. Canonicalize then only fills what is
// wholly absent (nil blocks, empty strings).

// fieldSet holds the proto field names (case-insensitive) a file set.
type fieldSet map[string]bool

func (f fieldSet) add(name string)      { f[strings.ToLower(name)] = true }
func (f fieldSet) has(name string) bool { return f[strings.ToLower(name)] }

// groupPresence records what a task group set; a nil fieldSet means the
// block was absent.
type groupPresence struct {
	count      bool
	restart    fieldSet
	reschedule fieldSet
	migrate    fieldSet
	disconnect fieldSet
	update     fieldSet
	tasks      []taskPresence
}

type taskPresence struct {
	restart   fieldSet
	resources fieldSet
}

// applyPresence applies the presence-dependent defaults: group count 1,
// partial policies merged over the job type's defaults (a task's restart
// over its group's), absent cpu/memory in a resources block, and
// disconnect.replace = true.
func applyPresence(job *messages.Job, groups []groupPresence) {
	typ := jobType(job)
	for i, g := range job.GetTaskGroups() {
		if i >= len(groups) {
			break
		}
		if g == nil {
			continue // Validate reports it
		}
		p := groups[i]
		if !p.count {
			g.Count = 1
		}
		mergePolicy(g.RestartPolicy, defaultRestart(typ), p.restart)
		mergePolicy(g.ReschedulePolicy, defaultReschedule(typ), p.reschedule)
		mergePolicy(g.Migrate, defaultMigrate(), p.migrate)
		if g.Disconnect != nil && !p.disconnect.has("Replace") {
			g.Disconnect.Replace = true
		}
		groupRestart := g.RestartPolicy
		if groupRestart == nil {
			groupRestart = defaultRestart(typ)
		}
		applyTaskPresence(g.Tasks, p.tasks, groupRestart)
	}
}

func applyTaskPresence(tasks []*messages.Task, pres []taskPresence, groupRestart *messages.RestartPolicy) {
	for j, t := range tasks {
		if j >= len(pres) {
			break
		}
		if t == nil {
			continue
		}
		mergePolicy(t.RestartPolicy, groupRestart, pres[j].restart)
		if r := t.Resources; r != nil {
			if !pres[j].resources.has("CPU") && r.Cores <= 0 { // cores stand for the cpu (Nomad)
				r.CPU = defaultCPU
			}
			if !pres[j].resources.has("MemoryMB") {
				r.MemoryMB = defaultMemoryMB
			}
		}
	}
}

// mergePolicy copies into dst every scalar field of base that the file did
// not set. It does nothing when dst or base is nil.
func mergePolicy[M proto.Message](dst, base M, present fieldSet) {
	dm, bm := dst.ProtoReflect(), base.ProtoReflect()
	if !dm.IsValid() || !bm.IsValid() {
		return
	}
	fields := dm.Descriptor().Fields()
	for i := 0; i < fields.Len(); i++ {
		fd := fields.Get(i)
		if present.has(string(fd.Name())) {
			continue
		}
		if bm.Has(fd) {
			dm.Set(fd, bm.Get(fd))
		} else {
			dm.Clear(fd)
		}
	}
}
