package cgroups

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

func TestCPUPercent(t *testing.T) {
	at := time.Unix(100, 0)
	prev := &Stats{At: at, CPUTotal: 1_000_000_000}
	for _, tc := range []struct {
		name string
		cur  *Stats
		want float64
	}{
		{"one core busy", &Stats{At: at.Add(time.Second), CPUTotal: 2_000_000_000}, 100},
		{"half a core", &Stats{At: at.Add(2 * time.Second), CPUTotal: 2_000_000_000}, 50},
		{"two cores", &Stats{At: at.Add(time.Second), CPUTotal: 3_000_000_000}, 200},
		{"no time passed", &Stats{At: at, CPUTotal: 2_000_000_000}, 0},
		{"counter went back (a new group)", &Stats{At: at.Add(time.Second), CPUTotal: 1}, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			require.InDelta(t, tc.want, CPUPercent(prev, tc.cur), 0.001)
		})
	}
	require.Zero(t, CPUPercent(nil, prev))
}

func TestNames(t *testing.T) {
	require.Equal(t, "a.web", GroupName(ModeV1, "a", "web"))
	require.Equal(t, "a.web.scope", GroupName(ModeV2, "a", "web"))
	for _, bad := range []string{"", ".", "..", "a/b", "a\x00"} {
		require.ErrorIs(t, checkName(bad), ErrInvalidName, "%q", bad)
	}
	p, err := cleanParent("troupe//x/")
	require.NoError(t, err)
	require.Equal(t, "/troupe/x", p)
	_, err = cleanParent("/a/../../etc")
	require.NoError(t, err, "Clean resolves it below /")
	_, err = cleanParent("")
	require.ErrorIs(t, err, ErrInvalidName)
}

func TestCheckParent(t *testing.T) {
	for _, ok := range []string{"/troupe", "troupe.slice", "/a/b"} {
		require.NoError(t, CheckParent(ok), ok)
	}
	for _, bad := range []string{"", "/", "//", "/a/../b", "..", "a\x00"} {
		require.ErrorIs(t, CheckParent(bad), ErrInvalidName, "%q", bad)
	}
}
