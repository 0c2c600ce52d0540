package jobdiff

import (
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/known/structpb"

	"github.com/troupe-dev/troupe/messages"
)

// baseJob is a stored job: it carries the server-managed fields a
// submitted job lacks.
func baseJob(t *testing.T) *messages.Job {
	return &messages.Job{
		ID: "example", Name: "example", Namespace: "default", Type: "service", Priority: 50,
		Datacenters: []string{"dc1", "dc2"},
		Version:     2, Status: "running", StatusDescription: "ok", Stable: true,
		CreateIndex: 10, ModifyIndex: 20, JobModifyIndex: 20, SubmitTime: 12345,
		TaskGroups: []*messages.TaskGroup{{
			Name: "cache", Count: 1,
			RestartPolicy: &messages.RestartPolicy{Attempts: 2, Interval: int64(30 * time.Minute), Delay: int64(15 * time.Second), Mode: "fail"},
			Tasks: []*messages.Task{
				{
					Name: "redis", Driver: "docker",
					Config:    config(t, map[string]any{"image": "redis:3.2", "ports": []any{"db"}}),
					Env:       map[string]string{"LOG": "info"},
					Resources: &messages.Resources{CPU: 500, MemoryMB: 256},
				},
				{Name: "sidecar", Driver: "exec", Config: config(t, map[string]any{"command": "/bin/sidecar"})},
			},
		}},
	}
}

func config(t *testing.T, m map[string]any) *structpb.Struct {
	s, err := structpb.NewStruct(m)
	require.NoError(t, err)
	return s
}

func clone(j *messages.Job) *messages.Job { return proto.Clone(j).(*messages.Job) }

// lines renders a diff one entry a line, with its path, for comparison:
// "Edited Group cache/Task redis/Config/image: redis:3.2 => redis:4.0".
func lines(d *JobDiff) []string {
	out := []string{d.Type + " Job " + d.ID}
	out = appendBody(out, "", d.Fields, d.Objects)
	for _, g := range d.TaskGroups {
		gp := "Group " + g.Name
		out = append(out, g.Type+" "+gp)
		out = appendBody(out, gp+"/", g.Fields, g.Objects)
		for _, task := range g.Tasks {
			tp := gp + "/Task " + task.Name
			out = append(out, task.Type+" "+tp)
			out = appendBody(out, tp+"/", task.Fields, task.Objects)
		}
	}
	return out
}

func appendBody(out []string, prefix string, fields []*FieldDiff, objects []*ObjectDiff) []string {
	for _, f := range fields {
		switch f.Type {
		case TypeEdited:
			out = append(out, fmt.Sprintf("Edited %s%s: %s => %s", prefix, f.Name, f.Old, f.New))
		case TypeDeleted:
			out = append(out, fmt.Sprintf("Deleted %s%s = %s", prefix, f.Name, f.Old))
		default:
			out = append(out, fmt.Sprintf("%s %s%s = %s", f.Type, prefix, f.Name, f.New))
		}
	}
	for _, o := range objects {
		out = append(out, o.Type+" "+prefix+o.Name)
		out = appendBody(out, prefix+o.Name+"/", o.Fields, o.Objects)
	}
	return out
}

func structString(s string) *structpb.Value { return structpb.NewStringValue(s) }
