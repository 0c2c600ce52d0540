package alloc

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/troupe-dev/troupe/messages"
)

// TestTaskMemoryMaxIsWhatWasAllocated: a task's memory limit above its
// reservation is the allocation's MemoryMaxMB, which the scheduler sets
// only with memory oversubscription on; the job's memory_max alone is
// ignored, as in Nomad.
func TestTaskMemoryMaxIsWhatWasAllocated(t *testing.T) {
	tests := []struct {
		name      string
		allocated int64 // the allocation's MemoryMaxMB (0: none)
		want      int64
	}{
		{"oversubscription on", 512, 512},
		{"oversubscription off", 0, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			a := bridgeAlloc(netAllocID)
			task := a.Job.TaskGroups[0].Tasks[0]
			task.Resources = &messages.Resources{CPU: 100, MemoryMB: 128, MemoryMaxMB: 512}
			a.AllocatedResources = &messages.AllocatedResources{Tasks: map[string]*messages.AllocatedTaskResources{
				task.Name: {Memory: &messages.AllocatedMemoryResources{MemoryMB: 128, MemoryMaxMB: tt.allocated}}}}
			got := taskConfig("/alloc", nil, a, task, testNet, nil)
			require.Equal(t, tt.want, got.MemoryMaxMB)
			require.EqualValues(t, 128, got.MemoryMB)
		})
	}
}
