package jobdiff

import (
	"slices"
	"testing"

	"github.com/stretchr/testify/require"
	"google.golang.org/protobuf/reflect/protoreflect"
	"google.golang.org/protobuf/types/known/structpb"

	"github.com/troupe-dev/troupe/messages"
)

// fill sets every field of m, recursively, to a non-zero value; a Struct
// gets one key.
func fill(m protoreflect.Message) {
	if s, ok := m.Interface().(*structpb.Struct); ok {
		s.Fields = map[string]*structpb.Value{"k": structpb.NewStringValue("v")}
		return
	}
	fds := m.Descriptor().Fields()
	for i := range fds.Len() {
		fd := fds.Get(i)
		switch {
		case fd.IsMap():
			mp := m.Mutable(fd).Map()
			v := mp.NewValue()
			if fd.MapValue().Kind() == protoreflect.MessageKind {
				fill(v.Message())
			} else {
				v = sample(fd.MapValue())
			}
			mp.Set(protoreflect.ValueOfString("key").MapKey(), v)
		case fd.IsList():
			l := m.Mutable(fd).List()
			v := l.NewElement()
			if fd.Kind() == protoreflect.MessageKind {
				fill(v.Message())
			} else {
				v = sample(fd)
			}
			l.Append(v)
		case fd.Kind() == protoreflect.MessageKind:
			fill(m.Mutable(fd).Message())
		default:
			m.Set(fd, sample(fd))
		}
	}
}

func sample(fd protoreflect.FieldDescriptor) protoreflect.Value {
	switch fd.Kind() {
	case protoreflect.BoolKind:
		return protoreflect.ValueOfBool(true)
	case protoreflect.Int32Kind:
		return protoreflect.ValueOfInt32(7)
	case protoreflect.Int64Kind:
		return protoreflect.ValueOfInt64(7e9)
	case protoreflect.Uint32Kind:
		return protoreflect.ValueOfUint32(7)
	case protoreflect.Uint64Kind:
		return protoreflect.ValueOfUint64(7)
	case protoreflect.StringKind:
		return protoreflect.ValueOfString("s-" + string(fd.Name()))
	case protoreflect.BytesKind:
		return protoreflect.ValueOfBytes([]byte("b-" + string(fd.Name())))
	}
	panic("jobdiff test: add a sample for kind " + fd.Kind().String())
}

// covered records "Message.Field" for every entry of the diff, walking the
// diff alongside the descriptors.
func covered(md protoreflect.MessageDescriptor, fields []*FieldDiff, objects []*ObjectDiff, seen map[string]bool) {
	for _, f := range fields {
		seen[string(md.Name())+"."+f.Name] = true
	}
	for _, o := range objects {
		fd := md.Fields().ByName(protoreflect.Name(o.Name))
		if fd == nil {
			continue
		}
		seen[string(md.Name())+"."+o.Name] = true
		switch {
		case fd.IsMap():
			if fd.MapValue().Kind() == protoreflect.MessageKind {
				for _, v := range o.Objects {
					covered(fd.MapValue().Message(), v.Fields, v.Objects, seen)
				}
			}
		case fd.Kind() == protoreflect.MessageKind && fd.Message().FullName() != structName:
			covered(fd.Message(), o.Fields, o.Objects, seen)
		}
	}
}

// leaves lists "Message.Field" for every field reachable from md that a
// diff shows, skipping the server-managed and carried-elsewhere ones.
func leaves(md protoreflect.MessageDescriptor, out map[string]bool) {
	fds := md.Fields()
	for i := range fds.Len() {
		fd := fds.Get(i)
		if skipped[fd.FullName()] {
			continue
		}
		out[string(md.Name())+"."+string(fd.Name())] = true
		switch {
		case fd.IsMap():
			if fd.MapValue().Kind() == protoreflect.MessageKind {
				leaves(fd.MapValue().Message(), out)
			}
		case fd.Kind() == protoreflect.MessageKind && fd.Message().FullName() != structName:
			leaves(fd.Message(), out)
		}
	}
}

// TestEveryFieldIsDiffed fills every field of a job, so a field added to
// job.proto is checked without touching this test: a new job's diff must
// show each one, deleting it too, and a copy must diff as None.
func TestEveryFieldIsDiffed(t *testing.T) {
	job := &messages.Job{}
	fill(job.ProtoReflect())
	want := map[string]bool{}
	leaves(jobDesc, want)
	leaves(groupDesc, want)
	leaves(taskDesc, want)

	for name, d := range map[string]*JobDiff{"added": Diff(nil, job), "deleted": Diff(job, nil)} {
		seen := map[string]bool{}
		covered(jobDesc, d.Fields, d.Objects, seen)
		for _, g := range d.TaskGroups {
			covered(groupDesc, g.Fields, g.Objects, seen)
			for _, task := range g.Tasks {
				covered(taskDesc, task.Fields, task.Objects, seen)
			}
		}
		require.Equal(t, sortedKeys(want), sortedKeys(seen), name)
		require.Len(t, d.TaskGroups, 1, name)
		require.Len(t, d.TaskGroups[0].Tasks, 1, name)
	}
	require.Equal(t, TypeNone, Diff(job, clone(job)).Type)
	for _, skip := range []string{"Job.Version", "Job.Status", "Job.ModifyIndex", "Job.SubmitTime", "Job.ID", "Job.TaskGroups"} {
		require.NotContains(t, want, skip)
	}
}

func sortedKeys(m map[string]bool) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}
