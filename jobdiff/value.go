package jobdiff

import (
	"encoding/base64"
	"fmt"
	"strconv"
	"time"

	"google.golang.org/protobuf/reflect/protoreflect"
	"google.golang.org/protobuf/types/known/durationpb"
	"google.golang.org/protobuf/types/known/structpb"
	"google.golang.org/protobuf/types/known/timestamppb"

	"github.com/troupe-dev/troupe/messages"
)

var (
	jobDesc   = (&messages.Job{}).ProtoReflect().Descriptor()
	groupDesc = (&messages.TaskGroup{}).ProtoReflect().Descriptor()
	taskDesc  = (&messages.Task{}).ProtoReflect().Descriptor()

	structName    = (&structpb.Struct{}).ProtoReflect().Descriptor().FullName()
	durationName  = (&durationpb.Duration{}).ProtoReflect().Descriptor().FullName()
	timestampName = (&timestamppb.Timestamp{}).ProtoReflect().Descriptor().FullName()
)

// skipped holds the fields the generic walk leaves out: those the server
// manages (never the user), and those carried elsewhere in the diff (the
// job's ID in JobDiff.ID, names in TaskGroupDiff.Name and TaskDiff.Name,
// groups and tasks in TaskGroups and Tasks).
var skipped = union(
	fieldSet(jobDesc, "Version", "Status", "StatusDescription", "Stable",
		"CreateIndex", "ModifyIndex", "JobModifyIndex", "SubmitTime", "MultiregionRollout"),
	fieldSet(jobDesc, "ID", "TaskGroups"),
	fieldSet(groupDesc, "Name", "Tasks"),
	fieldSet(taskDesc, "Name"),
)

// notDurations lists int64 fields that are not durations. Every other
// int64 field is nanoseconds (job.proto: "Durations are int64
// nanoseconds") and prints as a Go duration such as "30s".
var notDurations = fieldSet(jobDesc, "SubmitTime")

// fieldSet returns the full names of the named fields of d; it panics when
// one is missing, so a renamed proto field fails every test at once.
func fieldSet(d protoreflect.MessageDescriptor, names ...string) map[protoreflect.FullName]bool {
	set := make(map[protoreflect.FullName]bool, len(names))
	for _, n := range names {
		fd := d.Fields().ByName(protoreflect.Name(n))
		if fd == nil {
			panic(fmt.Sprintf("jobdiff: %s has no field %s", d.FullName(), n))
		}
		set[fd.FullName()] = true
	}
	return set
}

func union(sets ...map[protoreflect.FullName]bool) map[protoreflect.FullName]bool {
	all := make(map[protoreflect.FullName]bool)
	for _, s := range sets {
		for k := range s {
			all[k] = true
		}
	}
	return all
}

// isScalarMessage reports message types shown as one value, not an object.
func isScalarMessage(md protoreflect.MessageDescriptor) bool {
	return md.FullName() == durationName || md.FullName() == timestampName
}

// zeroShown reports whether the field's zero value is printed when the
// other side is set: numbers, bools and enums change as "0" => "3", as in
// Nomad, while strings and bytes change from nothing ("Added").
func zeroShown(fd protoreflect.FieldDescriptor) bool {
	switch fd.Kind() {
	case protoreflect.StringKind, protoreflect.BytesKind, protoreflect.MessageKind, protoreflect.GroupKind:
		return false
	}
	return !fd.HasPresence()
}

// formatValue prints one scalar value of field fd (or of its list or map
// value type).
func formatValue(fd protoreflect.FieldDescriptor, v protoreflect.Value) string {
	switch fd.Kind() {
	case protoreflect.BoolKind:
		return strconv.FormatBool(v.Bool())
	case protoreflect.EnumKind:
		if ev := fd.Enum().Values().ByNumber(v.Enum()); ev != nil {
			return string(ev.Name())
		}
		return strconv.FormatInt(int64(v.Enum()), 10)
	case protoreflect.Int64Kind, protoreflect.Sint64Kind, protoreflect.Sfixed64Kind:
		if !notDurations[fd.FullName()] {
			return time.Duration(v.Int()).String()
		}
		return strconv.FormatInt(v.Int(), 10)
	case protoreflect.Int32Kind, protoreflect.Sint32Kind, protoreflect.Sfixed32Kind:
		return strconv.FormatInt(v.Int(), 10)
	case protoreflect.Uint32Kind, protoreflect.Fixed32Kind, protoreflect.Uint64Kind, protoreflect.Fixed64Kind:
		return strconv.FormatUint(v.Uint(), 10)
	case protoreflect.FloatKind:
		return strconv.FormatFloat(v.Float(), 'g', -1, 32)
	case protoreflect.DoubleKind:
		return strconv.FormatFloat(v.Float(), 'g', -1, 64)
	case protoreflect.StringKind:
		return v.String()
	case protoreflect.BytesKind:
		return base64.StdEncoding.EncodeToString(v.Bytes())
	case protoreflect.MessageKind, protoreflect.GroupKind:
		return formatScalarMessage(v.Message())
	}
	return v.String()
}

func formatScalarMessage(m protoreflect.Message) string {
	switch x := m.Interface().(type) {
	case *durationpb.Duration:
		return x.AsDuration().String()
	case *timestamppb.Timestamp:
		return x.AsTime().UTC().Format(time.RFC3339Nano)
	}
	return fmt.Sprint(m.Interface())
}

// flattenStruct flattens a google.protobuf.Struct as Nomad flattens a
// task's config map: top-level keys as they are, nested keys as
// "mounts[0][source]", numbers without exponent, null as "null", and empty
// lists and objects as "[]" and "{}" so that adding one is still a change.
func flattenStruct(m protoreflect.Message) map[string]string {
	out := map[string]string{}
	if s, ok := m.Interface().(*structpb.Struct); ok {
		for k, v := range s.GetFields() {
			flattenValue(k, v, out)
		}
	}
	return out
}

func flattenValue(key string, v *structpb.Value, out map[string]string) {
	switch k := v.GetKind().(type) {
	case *structpb.Value_StringValue:
		out[key] = k.StringValue
	case *structpb.Value_NumberValue:
		out[key] = strconv.FormatFloat(k.NumberValue, 'f', -1, 64)
	case *structpb.Value_BoolValue:
		out[key] = strconv.FormatBool(k.BoolValue)
	case *structpb.Value_StructValue:
		if len(k.StructValue.GetFields()) == 0 {
			out[key] = "{}"
		}
		for sk, sv := range k.StructValue.GetFields() {
			flattenValue(key+"["+sk+"]", sv, out)
		}
	case *structpb.Value_ListValue:
		if len(k.ListValue.GetValues()) == 0 {
			out[key] = "[]"
		}
		for i, lv := range k.ListValue.GetValues() {
			flattenValue(key+"["+strconv.Itoa(i)+"]", lv, out)
		}
	default:
		out[key] = "null"
	}
}
