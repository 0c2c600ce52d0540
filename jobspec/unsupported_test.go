package jobspec

import (
	"encoding/json"
	"errors"
	"reflect"
	"strings"
	"testing"

	nomad "github.com/hashicorp/nomad/api"
	"github.com/stretchr/testify/require"
	"github.com/troupe-dev/troupe/messages"
)

const nomadAPI = "github.com/hashicorp/nomad/api"

// troupeTypes is the messages struct each Nomad type with honoured fields
// lands in.
var troupeTypes = map[string]any{
	"Job": messages.Job{}, "TaskGroup": messages.TaskGroup{}, "Task": messages.Task{},
	"Resources": messages.Resources{}, "NetworkResource": messages.NetworkResource{},
	"Port": messages.Port{}, "VolumeRequest": messages.VolumeRequest{},
	"VolumeMount": messages.VolumeMount{}, "RestartPolicy": messages.RestartPolicy{},
	"ReschedulePolicy": messages.ReschedulePolicy{}, "MigrateStrategy": messages.MigrateStrategy{},
	"DisconnectStrategy": messages.DisconnectStrategy{}, "Constraint": messages.Constraint{},
	"Affinity": messages.Affinity{}, "Spread": messages.Spread{},
	"SpreadTarget": messages.SpreadTarget{}, "RequestedDevice": messages.RequestedDevice{},
	"LogConfig": messages.LogConfig{}, "TaskCSIPluginConfig": messages.CSIPluginConfig{},
	"PeriodicConfig": messages.PeriodicConfig{}, "Multiregion": messages.Multiregion{},
	"MultiregionStrategy": messages.MultiregionStrategy{}, "MultiregionRegion": messages.MultiregionRegion{}, "TaskLifecycle": messages.TaskLifecycle{}, "Template": messages.TaskTemplate{},
	"ChangeScript":           messages.ChangeScript{},
	"ParameterizedJobConfig": messages.ParameterizedJobConfig{}, "DispatchPayloadConfig": messages.DispatchPayloadConfig{},
	"UpdateStrategy": messages.UpdateStrategy{},
	"TaskArtifact":   messages.TaskArtifact{},
	"Service":        messages.Service{}, "ServiceCheck": messages.ServiceCheck{},
	"CheckRestart": messages.CheckRestart{}, "WorkloadIdentity": messages.TaskIdentity{},
}

// structOf strips pointers, slices and maps down to the struct they hold.
func structOf(t reflect.Type) reflect.Type {
	for t.Kind() == reflect.Pointer || t.Kind() == reflect.Slice || t.Kind() == reflect.Map {
		t = t.Elem()
	}
	return t
}

func jsonName(f reflect.StructField) string {
	name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
	if name == "" {
		return f.Name
	}
	return name
}

func jsonFields(v any) map[string]bool {
	out := map[string]bool{}
	t := reflect.TypeOf(v)
	for i := 0; i < t.NumField(); i++ {
		if f := t.Field(i); f.IsExported() {
			out[jsonName(f)] = true
		}
	}
	return out
}

// TestNomadFieldsCoverNomadAPI walks Nomad's api.Job, and every struct
// nested in a field troupe honours, and checks that nomadFields says what
// troupe does with each field: a field Nomad adds fails this test until it
// is listed as honoured, output or refused. It also checks that no entry
// is stale, that honoured fields exist in troupe's job, and that the
// nested types the table names are the ones Nomad's fields hold.
func TestNomadFieldsCoverNomadAPI(t *testing.T) {
	walked := map[string]bool{}
	var walk func(reflect.Type)
	walk = func(ty reflect.Type) {
		name := ty.Name()
		if walked[name] {
			return
		}
		walked[name] = true
		rules, ok := nomadFields[name]
		require.True(t, ok, "nomadFields has no entry for Nomad's api.%s", name)
		troupe := map[string]bool{}
		if v, ok := troupeTypes[name]; ok {
			troupe = jsonFields(v)
		}
		seen := map[string]bool{}
		for i := 0; i < ty.NumField(); i++ {
			f := ty.Field(i)
			field := jsonName(f)
			if !f.IsExported() || field == "-" {
				continue
			}
			seen[field] = true
			r, ok := rules[field]
			require.True(t, ok, "api.%s.%s is neither honoured nor refused: add it to nomadFields", name, field)
			elem := structOf(f.Type)
			nestedAPI := elem.Kind() == reflect.Struct && elem.PkgPath() == nomadAPI
			switch r.kind {
			case kindHonoured, kindOutput:
				require.True(t, troupe[field], "api.%s.%s is %s but troupe's job has no such field", name, field, r.kind)
			}
			if r.kind == kindHonoured || r.kind == kindPartly {
				require.Equal(t, nestedAPI, r.of != "", "api.%s.%s: a nested Nomad struct must name its type (and only then)", name, field)
			}
			if r.of != "" {
				require.Equal(t, elem.Name(), r.of, "api.%s.%s holds api.%s", name, field, elem.Name())
				require.Equal(t, f.Type.Kind() == reflect.Map, r.dict, "api.%s.%s: dict must match a map", name, field)
				walk(elem)
			}
		}
		for field := range rules {
			require.True(t, seen[field], "nomadFields lists %s.%s, which api.%s does not have", name, field, name)
		}
	}
	walk(reflect.TypeOf(nomad.Job{}))
	for name := range nomadFields {
		require.True(t, walked[name], "nomadFields lists %s, which no walked field holds", name)
	}
}

// nomadPlace is where in a job JSON a test puts an object of each type.
var nomadPlace = map[string]string{
	"Job": "", "TaskGroup": "TaskGroups.0", "Task": "TaskGroups.0.Tasks.0",
	"Resources": "TaskGroups.0.Tasks.0.Resources", "NetworkResource": "TaskGroups.0.Networks.0",
	"Port": "TaskGroups.0.Networks.0.DynamicPorts.0", "RestartPolicy": "TaskGroups.0.RestartPolicy",
	"LogConfig": "TaskGroups.0.Tasks.0.LogConfig", "VolumeRequest": "TaskGroups.0.Volumes.v",
	"VolumeMount": "TaskGroups.0.Tasks.0.VolumeMounts.0", "EphemeralDisk": "TaskGroups.0.EphemeralDisk",
	"TaskArtifact": "TaskGroups.0.Tasks.0.Artifacts.0",
	"Template":     "TaskGroups.0.Tasks.0.Templates",
	"ChangeScript": "TaskGroups.0.Tasks.0.Templates.0.ChangeScript",
	"Service":      "TaskGroups.0.Services.0", "ServiceCheck": "TaskGroups.0.Services.0.Checks.0",
	"WorkloadIdentity": "TaskGroups.0.Tasks.0.Identity",
}

// nonZero is a value of a Nomad field's type that is not zero.
func nonZero(t reflect.Type) any {
	switch t.Kind() {
	case reflect.Pointer:
		return nonZero(t.Elem())
	case reflect.Bool:
		return true
	case reflect.String:
		return "x"
	case reflect.Slice:
		if t.Elem().Kind() == reflect.Uint8 {
			return "eA=="
		}
		return []any{map[string]any{"Zz": 1}}
	case reflect.Map:
		return map[string]any{"k": "x"}
	case reflect.Struct:
		return map[string]any{"Zz": 1}
	}
	return 7
}

// TestParseJSONRefusesEveryRefusedField sets each refused field of the
// table, one at a time, in an otherwise valid job, and expects a refusal
// that names it (and nothing stored: ParseJSON returns no job).
func TestParseJSONRefusesEveryRefusedField(t *testing.T) {
	apiTypes := map[string]reflect.Type{}
	var collect func(reflect.Type)
	collect = func(ty reflect.Type) {
		if _, ok := apiTypes[ty.Name()]; ok {
			return
		}
		apiTypes[ty.Name()] = ty
		for i := 0; i < ty.NumField(); i++ {
			if e := structOf(ty.Field(i).Type); e.Kind() == reflect.Struct && e.PkgPath() == nomadAPI {
				collect(e)
			}
		}
	}
	collect(reflect.TypeOf(nomad.Job{}))
	overrides := map[string]any{"Update": map[string]any{"MaxParallel": 2}}
	for typ, rules := range nomadFields {
		for field, r := range rules {
			if r.kind != kindRefused {
				continue
			}
			sf, ok := apiTypes[typ].FieldByName(field)
			require.True(t, ok, "%s.%s", typ, field)
			v, ok := overrides[field]
			if !ok {
				v = nonZero(sf.Type)
			}
			if r.allow != nil && r.allow(v) {
				continue // LogConfig.Enabled: true is troupe's behaviour, false is zero
			}
			place, ok := nomadPlace[typ]
			require.True(t, ok, "no test place for %s", typ)
			t.Run(typ+"."+field, func(t *testing.T) {
				job := validJobJSON()
				setAt(job, place, field, v)
				src, err := json.Marshal(map[string]any{"Job": job})
				require.NoError(t, err)
				got, err := ParseJSON(src)
				require.Error(t, err)
				require.Nil(t, got)
				require.True(t, errors.Is(err, ErrUnsupported), err.Error())
				require.True(t, errors.Is(err, ErrParse), err.Error())
				if r.why == "" {
					require.Contains(t, err.Error(), field+" is not supported yet")
				}
				require.Contains(t, err.Error(), `job "j"`)
			})
		}
	}
}

func validJobJSON() map[string]any {
	return map[string]any{"ID": "j", "TaskGroups": []any{map[string]any{
		"Name": "g", "Networks": []any{map[string]any{}},
		"Volumes": map[string]any{"v": map[string]any{"Type": "csi", "Source": "s"}},
		"Tasks": []any{map[string]any{"Name": "t", "Driver": "exec",
			"Config": map[string]any{"command": "/bin/true"}}},
	}}}
}

// setAt sets field on the object at the dotted place (list indexes and
// map keys as segments), creating objects on the way.
func setAt(obj map[string]any, place, field string, v any) {
	cur := any(obj)
	if place != "" {
		for _, seg := range strings.Split(place, ".") {
			switch c := cur.(type) {
			case []any:
				cur = c[0]
			case map[string]any:
				next, ok := c[seg]
				if !ok {
					next = map[string]any{}
					if seg == "DynamicPorts" || seg == "VolumeMounts" || seg == "Templates" || seg == "Artifacts" || seg == "Services" || seg == "Checks" {
						next = []any{map[string]any{}}
					}
					c[seg] = next
				}
				cur = next
			}
		}
	}
	if l, ok := cur.([]any); ok {
		cur = l[0]
	}
	cur.(map[string]any)[field] = v
}
