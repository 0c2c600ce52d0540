package jobspec

import (
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/troupe-dev/troupe/messages"
)

// ParseJSON decodes a job in Nomad's JSON API form: either a register body
// {"Job": {...}} or a bare job object, with PascalCase fields and durations
// in nanoseconds. A field that troupe does not implement yet, or that is
// no field of Nomad's job API, is refused when it is set (not zero) with
// an *UnsupportedError naming it; nomadFields lists them all. JSON that CheckJSON refuses
// (invalid UTF-8, duplicate keys, too deep) is an error, and so is
// anything after the object. As with Parse, groups without
// a Count key (or with "Count": null) get 1 and partial policies are merged
// over the job type's defaults. Errors are *ParseError with the line and
// column of the offending byte.
func ParseJSON(src []byte) (*messages.Job, error) {
	if err := CheckJSON(src); err != nil {
		return nil, err
	}
	var top any
	if err := json.Unmarshal(src, &top); err != nil {
		return nil, jsonError(src, err)
	}
	obj, ok := top.(map[string]any)
	if !ok {
		return nil, &ParseError{Line: 1, Column: 1, Detail: "a job must be a JSON object"}
	}
	jobObj := obj
	var body struct{ Job *messages.Job }
	target := any(&body)
	if inner, wrapped := lookup(obj, "Job"); wrapped {
		if jobObj, ok = inner.(map[string]any); !ok {
			return nil, &ParseError{Line: 1, Column: 1, Detail: "Job must be a JSON object"}
		}
	} else {
		body.Job = &messages.Job{}
		target = body.Job
	}
	if err := checkConfigs(jobObj); err != nil {
		return nil, err
	}
	if err := checkNomadNumbers(jobObj); err != nil {
		return nil, err
	}
	dropServerSet(jobObj)
	if err := checkUnsupported(jobObj); err != nil {
		return nil, err
	}
	if err := json.Unmarshal(src, target); err != nil {
		return nil, jsonError(src, err)
	}
	body.Job.MultiregionRollout = "" // the server's, never the submitter's
	for _, f := range []string{"Type", "Name"} {
		if v, set := lookup(jobObj, f); set && v == "" {
			return nil, &ParseError{Detail: emptyField(f)}
		}
	}
	groups := jsonPresence(jobObj)
	applyPresence(body.Job, groups)
	applyUpdate(body.Job, keysOf(jobObj, "Update"), groups)
	if p, ok := lookup(jobObj, "Periodic"); ok {
		if pm, ok := p.(map[string]any); ok && body.Job.Periodic != nil {
			if _, set := lookup(pm, "Enabled"); !set {
				body.Job.Periodic.Enabled = true // Nomad's default
			}
		}
	}
	dropZeroLifecycles(body.Job)
	return body.Job, nil
}

// dropServerSet forgets the troupe fields that no Nomad job has and that
// the server sets (a job read back from GET /v1/job carries them).
func dropServerSet(job map[string]any) {
	for k := range job {
		if strings.EqualFold(k, "MultiregionRollout") {
			delete(job, k)
		}
	}
}

// dropZeroLifecycles makes a task's all-zero Lifecycle (what a client
// sends for a struct left empty) a main task's nil one, as every other
// zero value counts as unset here; a Lifecycle with anything set is
// validated (Nomad requires its Hook).
func dropZeroLifecycles(job *messages.Job) {
	for _, g := range job.GetTaskGroups() {
		for _, t := range g.GetTasks() {
			if lc := t.GetLifecycle(); lc != nil && lc.Hook == "" && !lc.Sidecar {
				t.Lifecycle = nil
			}
		}
	}
}

// emptyField says that a job field given as "" must be left out instead,
// for its default (Nomad refuses an empty type or name too).
func emptyField(f string) string {
	return fmt.Sprintf("job %s must not be empty; leave it out for the default", strings.ToLower(f))
}

// jsonError converts encoding/json errors into a *ParseError with a line and
// column computed from the byte offset.
func jsonError(src []byte, err error) *ParseError {
	var syn *json.SyntaxError
	var typ *json.UnmarshalTypeError
	pe := &ParseError{Detail: err.Error()}
	switch {
	case errors.As(err, &syn):
		// Offset counts the bytes read, the offending one included; at the
		// end of the input there is no offending byte, so point past it.
		at := int(syn.Offset) - 1
		if strings.HasPrefix(syn.Error(), "unexpected end") {
			at = len(src)
		}
		pe.Line, pe.Column = lineCol(src, at)
		pe.Detail = "invalid JSON: " + syn.Error()
	case errors.As(err, &typ):
		pe.Line, pe.Column = lineCol(src, int(typ.Offset)-1)
		pe.Detail = fmt.Sprintf("field %s: cannot use a JSON %s as %s", typ.Field, typ.Value, typ.Type)
	}
	return pe
}

// jsonPresence records which fields the JSON job set, for applyPresence.
func jsonPresence(job map[string]any) []groupPresence {
	groups, _ := lookupValue(job, "TaskGroups").([]any)
	out := make([]groupPresence, len(groups))
	for i, gv := range groups {
		g, _ := gv.(map[string]any)
		_, out[i].count = lookup(g, "Count")
		out[i].restart = keysOf(g, "RestartPolicy")
		out[i].reschedule = keysOf(g, "ReschedulePolicy")
		out[i].migrate = keysOf(g, "Migrate")
		out[i].disconnect = keysOf(g, "Disconnect")
		out[i].update = keysOf(g, "Update")
		tasks, _ := lookupValue(g, "Tasks").([]any)
		out[i].tasks = make([]taskPresence, len(tasks))
		for j, tv := range tasks {
			t, _ := tv.(map[string]any)
			out[i].tasks[j].restart = keysOf(t, "RestartPolicy")
			out[i].tasks[j].resources = keysOf(t, "Resources")
		}
	}
	return out
}

// lookup finds key as encoding/json would (exact, then case-insensitive);
// a null value counts as absent.
func lookup(obj map[string]any, key string) (any, bool) {
	if v, ok := obj[key]; ok {
		return v, v != nil
	}
	for k, v := range obj {
		if strings.EqualFold(k, key) {
			return v, v != nil
		}
	}
	return nil, false
}

func lookupValue(obj map[string]any, key string) any {
	v, _ := lookup(obj, key)
	return v
}

// keysOf returns the non-null keys of the object at obj[key], or nil when
// it is absent.
func keysOf(obj map[string]any, key string) fieldSet {
	inner, ok := lookupValue(obj, key).(map[string]any)
	if !ok {
		return nil
	}
	fs := fieldSet{}
	for k, v := range inner {
		if v != nil {
			fs.add(k)
		}
	}
	return fs
}

// checkConfigs rejects a task Config that is not an object; its decoder
// (protojson) would report a position relative to the Config value only.
func checkConfigs(job map[string]any) error {
	groups, _ := lookupValue(job, "TaskGroups").([]any)
	for i, gv := range groups {
		g, _ := gv.(map[string]any)
		tasks, _ := lookupValue(g, "Tasks").([]any)
		for j, tv := range tasks {
			t, _ := tv.(map[string]any)
			if cfg, ok := lookup(t, "Config"); ok {
				if _, isObj := cfg.(map[string]any); !isObj {
					return &ParseError{Detail: fmt.Sprintf("TaskGroups[%d].Tasks[%d].Config must be a JSON object", i, j)}
				}
			}
		}
	}
	return nil
}
