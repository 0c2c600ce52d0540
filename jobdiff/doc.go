// Package jobdiff computes and prints the difference between two versions
// of a job, the diff `troupe job plan` shows (like `nomad job plan`).
//
// Diff returns a JobDiff whose types and fields are those of
// github.com/hashicorp/nomad/api (JobDiff, TaskGroupDiff, TaskDiff,
// ObjectDiff, FieldDiff), so its JSON is what the Nomad API client's
// Jobs().Plan() decodes. Format renders it as text.
//
//	d := jobdiff.Diff(stored, submitted) // stored nil: a new job
//	d.TaskGroups[0].Updates = map[string]uint64{"create/destroy update": 1}
//	fmt.Print(jobdiff.Format(d, false))
//
// prints, for a changed image:
//
//	+/- Job: "example"
//	+/- Task Group: "cache" (1 create/destroy update)
//	  +/- Task: "redis"
//	    +/- Config {
//	      +/- image: "redis:3.2" => "redis:4.0"
//	        }
//
// # What is compared
//
// Messages are walked generically with protoreflect, so a field added to
// messages/job.proto shows up in diffs without code here. The rules:
//
//   - Type is Added when only the new side exists, Deleted when only the
//     old one does, Edited when both do and something differs, None when
//     nothing does. Only changes appear, except that an Added or Deleted
//     object lists every set field. Fields and objects are sorted by name.
//   - Task groups are matched by Name, tasks by Name within their group.
//     Every group and task of either job gets a diff, unchanged ones of
//     Type None (a planner attaches Updates to them), sorted by name.
//   - A scalar field is a FieldDiff with string values: numbers and bools
//     as Go prints them, enums by name, int64 fields as Go durations ("15s")
//     because job.proto stores durations as int64 nanoseconds. A string
//     going from "" to "x" is Added; a number or bool within an existing
//     message is Edited, "0" => "3", as Nomad shows it.
//   - A nested message is an ObjectDiff named after the field.
//   - A map is one ObjectDiff named after the field, with a FieldDiff (or,
//     for message values, an ObjectDiff) named by each changed key.
//   - A repeated scalar (Datacenters) is compared as Nomad does, as a set
//     that ignores order: one ObjectDiff named after the field holding an
//     Added or Deleted FieldDiff, also named after the field, per value.
//   - A repeated message gives one ObjectDiff, named after the field, per
//     changed element. Elements are matched by a string Name or Label field
//     when their type has one (ports, devices), and an Edited element then
//     carries that key as a FieldDiff of Type None so a reader can tell
//     which one changed. Other elements (constraints, networks) match an
//     equal element first; the rest pair up in order as Edited, and the
//     surplus is Added or Deleted.
//   - A google.protobuf.Struct (the task's Config) is one ObjectDiff whose
//     fields are its flattened keys, as Nomad flattens a driver config:
//     "image", "args[0]", "mounts[0][source]".
//
// Left out: fields the server sets, not the user (Job.Version, Status,
// StatusDescription, Stable, CreateIndex, ModifyIndex, JobModifyIndex,
// SubmitTime), and fields carried elsewhere in the diff (Job.ID in
// JobDiff.ID, group and task names, Job.TaskGroups and TaskGroup.Tasks).
// Jobs with different IDs still diff; the ID then shows as an Edited field.
//
// Diff never fills TaskGroupDiff.Updates or the Annotations; those are the
// planner's.
package jobdiff
