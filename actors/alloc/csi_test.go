package alloc

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/troupe-dev/troupe/messages"
	"github.com/troupe-dev/troupe/runtime/clientstate"
)

func TestVolumePaths(t *testing.T) {
	require.Equal(t, "/a/alloc1/web/data", volumeMountPath("/a", "alloc1", "web", "/data"))
	require.Equal(t, "/a/alloc1/web/data", volumeMountPath("/a", "alloc1", "web", "data"))
	require.Equal(t, "/a/alloc1/web/etc", volumeMountPath("/a", "alloc1", "web", "../../../etc"), "stays in the task dir")
	require.Equal(t, "TROUPE_VOLUME_MY_DATA_2", volumeEnvName("my-data.2"))
	require.Equal(t, "/r/staging/plug/vol_1/file-system-single-node-writer",
		stagingPath("/r", "plug", "vol/1", "file-system", "single-node-writer"))
	require.Equal(t, "/r/per-alloc/a1/vol[0]/ro-file-system-single-node-reader-only",
		publishPath("/r", "a1", "vol[0]", "file-system", "single-node-reader-only", true))
}

func TestClaimErrorClasses(t *testing.T) {
	for code, final := range map[string]bool{"not_found": true, "conflict": true, "invalid": true,
		"unavailable": false, "internal": false, "not_leader": false} {
		require.Equal(t, final, finalClaimCode(messages.ErrorCode(code)), code)
		require.Equal(t, messages.ErrorCode(code), claimErrorCode(errCode(code)))
	}
	require.Empty(t, claimErrorCode(nil))
}

func TestUsage(t *testing.T) {
	u := newUsage()
	u.Acquire("s1", "a")
	u.Acquire("s1", "a")
	u.Acquire("s1", "b")
	u.Acquire("s2", "a")
	require.Equal(t, 2, u.Users("s1"))
	require.Equal(t, 1, u.Release("s1", "a"), "b still uses s1")
	require.Equal(t, 1, u.Release("s1", "a"), "releasing twice changes nothing")
	require.Equal(t, 0, u.Release("s1", "b"))
	require.Equal(t, 1, u.Users("s2"))

	rec := func(state string, staged bool) *clientstate.VolumeMount {
		return &clientstate.VolumeMount{Name: "v", StagingPath: "s", Staged: staged, State: &messages.AllocVolumeState{State: state}}
	}
	stored := []*clientstate.StoredAlloc{
		{Alloc: &messages.Allocation{ID: "mounted"}, Volumes: map[string]*clientstate.VolumeMount{"v": rec(volumeMounted, true)}},
		{Alloc: &messages.Allocation{ID: "unpublishing"}, Volumes: map[string]*clientstate.VolumeMount{"v": rec(VolumeUnpublishing, true)}},
		{Alloc: &messages.Allocation{ID: "unstaged"}, Volumes: map[string]*clientstate.VolumeMount{"v": rec(VolumeUnpublishing, false)}},
		{Alloc: &messages.Allocation{ID: "done"}, Volumes: map[string]*clientstate.VolumeMount{"v": rec(volumeUnpublished, true)}},
		{Alloc: &messages.Allocation{ID: "failed"}, Volumes: map[string]*clientstate.VolumeMount{"v": rec(volumeFailed, true)}},
	}
	require.Equal(t, 2, NewUsageFromState(stored).Users("s"))
}
