package alloc

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/troupe-dev/troupe/messages"
)

// TestTaskLogConfigReachesTheDriver: the task's logs block sizes the
// driver's log rotation.
func TestTaskLogConfigReachesTheDriver(t *testing.T) {
	a := bridgeAlloc(netAllocID)
	task := a.Job.TaskGroups[0].Tasks[0]
	task.LogConfig = &messages.LogConfig{MaxFiles: 3, MaxFileSizeMB: 7}
	got := taskConfig("/alloc", nil, a, task, testNet, nil)
	require.Equal(t, 3, got.LogMaxFiles)
	require.Equal(t, 7, got.LogMaxFileSizeMB)
}
