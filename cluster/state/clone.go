package state

import (
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protoreflect"

	"github.com/troupe-dev/troupe/messages"
)

// shallowCopy returns a new message whose fields are those of src; nested
// messages, lists and maps are shared, not copied. Stored objects are never
// mutated, so a handler copies one this way and then only assigns fields.
func shallowCopy[T proto.Message](src T) T {
	dst := src.ProtoReflect().New()
	src.ProtoReflect().Range(func(fd protoreflect.FieldDescriptor, v protoreflect.Value) bool {
		dst.Set(fd, v)
		return true
	})
	return dst.Interface().(T)
}

func copyJob(j *messages.Job) *messages.Job                 { return shallowCopy(j) }
func copyAlloc(a *messages.Allocation) *messages.Allocation { return shallowCopy(a) }
func copyNode(n *messages.Node) *messages.Node              { return shallowCopy(n) }

// jobSpecEqual reports whether two jobs are the same submission, ignoring
// what the store sets: version, indexes, submit time, status and stability.
func jobSpecEqual(a, b *messages.Job) bool {
	return proto.Equal(jobSpec(a), jobSpec(b))
}

func jobSpec(j *messages.Job) *messages.Job {
	c := copyJob(j)
	messages.ClearServerFields(c)
	return c
}
