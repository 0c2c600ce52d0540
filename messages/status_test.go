package messages

import (
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestAllocTerminalStatus is the whole table: every desired status against
// every client status (and the empty ones a new allocation has).
func TestAllocTerminalStatus(t *testing.T) {
	clients := []string{"", AllocClientStatusPending, AllocClientStatusRunning, AllocClientStatusComplete,
		AllocClientStatusFailed, AllocClientStatusLost, AllocClientStatusUnknown}
	desireds := []string{"", AllocDesiredStatusRun, AllocDesiredStatusStop, AllocDesiredStatusEvict}
	clientDone := map[string]bool{AllocClientStatusComplete: true, AllocClientStatusFailed: true, AllocClientStatusLost: true}
	serverDone := map[string]bool{AllocDesiredStatusStop: true, AllocDesiredStatusEvict: true}
	for _, c := range clients {
		for _, d := range desireds {
			t.Run(d+"/"+c, func(t *testing.T) {
				a := &Allocation{ClientStatus: c, DesiredStatus: d}
				require.Equal(t, clientDone[c], a.ClientTerminalStatus(), "client")
				require.Equal(t, clientDone[c], ClientTerminalStatus(c), "client, bare")
				require.Equal(t, clientDone[c], ClientTerminalStatus(c), "client")
				require.Equal(t, serverDone[d], a.ServerTerminalStatus(), "server")
				require.Equal(t, serverDone[d], ServerTerminalStatus(d), "server, bare")
				require.Equal(t, clientDone[c] || serverDone[d], a.TerminalStatus(), "either")
			})
		}
	}
	var nilAlloc *Allocation
	require.False(t, nilAlloc.TerminalStatus(), "a nil allocation reads as empty")
}

func TestEvalTerminalStatus(t *testing.T) {
	for _, tc := range []struct {
		status string
		want   bool
	}{
		{"", false},
		{EvalStatusPending, false},
		{EvalStatusBlocked, false},
		{EvalStatusComplete, true},
		{EvalStatusFailed, true},
		{EvalStatusCanceled, true},
		{"cancelled", false},
	} {
		t.Run(tc.status, func(t *testing.T) {
			require.Equal(t, tc.want, EvalTerminalStatus(tc.status))
			require.Equal(t, tc.want, (&Evaluation{Status: tc.status}).TerminalStatus())
		})
	}
}

// TestStatusesInNomadsSpelling: the JSON carries the strings Nomad's API
// uses.
func TestStatusesInNomadsSpelling(t *testing.T) {
	b, err := json.Marshal(&Allocation{ClientStatus: AllocClientStatusLost, DesiredStatus: AllocDesiredStatusEvict})
	require.NoError(t, err)
	require.Contains(t, string(b), `"ClientStatus":"lost"`)
	require.Contains(t, string(b), `"DesiredStatus":"evict"`)
	for _, c := range [][2]string{
		{AllocClientStatusPending, "pending"}, {AllocClientStatusRunning, "running"}, {AllocClientStatusComplete, "complete"},
		{AllocClientStatusFailed, "failed"}, {AllocClientStatusUnknown, "unknown"},
		{AllocDesiredStatusRun, "run"}, {AllocDesiredStatusStop, "stop"},
		{EvalStatusBlocked, "blocked"}, {EvalStatusCanceled, "canceled"},
		{NodeStatusInit, "initializing"}, {NodeStatusReady, "ready"}, {NodeStatusDisconnected, "disconnected"}, {NodeStatusDown, "down"},
		{NodeSchedulingEligible, "eligible"}, {NodeSchedulingIneligible, "ineligible"},
		{JobStatusDead, "dead"}, {TaskStateDead, "dead"},
	} {
		require.Equal(t, c[1], c[0])
	}
}
