package jobspec

import (
	"encoding/json"
	"fmt"

	"github.com/troupe-dev/troupe/messages"
	"google.golang.org/protobuf/proto"
)

// EncodeJSON writes job as a Nomad register body {"Job": {...}} that
// ParseJSON reads back unchanged. Unlike json.Marshal of the message, it
// keeps the zero values whose absence ParseJSON would fill with a default
// (group Count, every field of the restart, reschedule, migrate and
// disconnect policies, resources CPU and MemoryMB): the generated struct
// tags omit zero values.
func EncodeJSON(job *messages.Job) ([]byte, error) {
	raw, err := json.Marshal(job)
	if err != nil {
		return nil, fmt.Errorf("%w: %v", ErrParse, err)
	}
	var obj map[string]any
	if err := json.Unmarshal(raw, &obj); err != nil {
		return nil, fmt.Errorf("%w: %v", ErrParse, err)
	}
	groups, _ := obj["TaskGroups"].([]any)
	for i, g := range job.GetTaskGroups() {
		gm, ok := groups[i].(map[string]any)
		if !ok {
			continue
		}
		gm["Count"] = g.GetCount()
		putFull(gm, "RestartPolicy", g.GetRestartPolicy())
		putFull(gm, "ReschedulePolicy", g.GetReschedulePolicy())
		putFull(gm, "Migrate", g.GetMigrate())
		putFull(gm, "Disconnect", g.GetDisconnect())
		tasks, _ := gm["Tasks"].([]any)
		for j, t := range g.GetTasks() {
			if tm, ok := tasks[j].(map[string]any); ok {
				putFull(tm, "RestartPolicy", t.GetRestartPolicy())
				if rm, ok := tm["Resources"].(map[string]any); ok {
					rm["CPU"], rm["MemoryMB"] = t.GetResources().GetCPU(), t.GetResources().GetMemoryMB()
				}
			}
		}
	}
	return json.Marshal(map[string]any{"Job": obj})
}

// putFull stores every scalar field of a flat policy message, zero or not.
func putFull[M proto.Message](obj map[string]any, key string, msg M) {
	m := msg.ProtoReflect()
	if !m.IsValid() {
		return
	}
	out := map[string]any{}
	fields := m.Descriptor().Fields()
	for i := 0; i < fields.Len(); i++ {
		fd := fields.Get(i)
		out[string(fd.Name())] = m.Get(fd).Interface()
	}
	obj[key] = out
}
