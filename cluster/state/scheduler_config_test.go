package state

import (
	"bytes"
	"io"
	"testing"

	"github.com/stretchr/testify/require"
	"google.golang.org/protobuf/proto"

	"github.com/troupe-dev/troupe/messages"
)

func setSchedulerConfig(c *messages.SchedulerConfiguration, cas bool, index uint64) *messages.Command {
	return &messages.Command{Cmd: &messages.Command_SetSchedulerConfig{SetSchedulerConfig: &messages.SetSchedulerConfig{
		Config: c, CAS: cas, Index: index}}}
}

func TestSchedulerConfigDefaultsWhenNoneStored(t *testing.T) {
	h := newHarness(t)
	got := h.snap().SchedulerConfig()
	require.True(t, proto.Equal(messages.DefaultSchedulerConfiguration(), got), "got %v", got)
	require.Equal(t, "binpack", got.SchedulerAlgorithm)
	require.True(t, proto.Equal(&messages.PreemptionConfig{SystemSchedulerEnabled: true},
		got.PreemptionConfig))
	require.Zero(t, got.ModifyIndex)
}

// TestSetSchedulerConfigCAS: a plain set always lands; a check-and-set
// lands only on the stored ModifyIndex (0 while none is stored); a bad
// algorithm is refused and changes nothing.
func TestSetSchedulerConfigCAS(t *testing.T) {
	spread := &messages.SchedulerConfiguration{SchedulerAlgorithm: "spread",
		PreemptionConfig: &messages.PreemptionConfig{ServiceSchedulerEnabled: true}}
	tests := []struct {
		name      string
		first     bool   // store a configuration at index 1 first
		cas       bool   // the second command is a check-and-set...
		index     uint64 // ...against this index
		config    *messages.SchedulerConfiguration
		wantOK    bool
		wantErr   error
		wantAlgo  string
		wantIndex uint64 // stored ModifyIndex after the second command
	}{
		{name: "set without CAS", first: true, config: spread, wantOK: true, wantAlgo: "spread", wantIndex: 2},
		{name: "CAS on the stored index", first: true, cas: true, index: 1, config: spread, wantOK: true, wantAlgo: "spread", wantIndex: 2},
		{name: "CAS on another index", first: true, cas: true, index: 7, config: spread, wantAlgo: "binpack", wantIndex: 1},
		{name: "CAS 0 with none stored", cas: true, index: 0, config: spread, wantOK: true, wantAlgo: "spread", wantIndex: 1},
		{name: "CAS 0 with one stored", first: true, cas: true, index: 0, config: spread, wantAlgo: "binpack", wantIndex: 1},
		{name: "unknown algorithm", first: true, config: &messages.SchedulerConfiguration{SchedulerAlgorithm: "random"},
			wantErr: ErrInvalidSchedulerConfig, wantAlgo: "binpack", wantIndex: 1},
		{name: "empty algorithm is binpack", first: true, config: &messages.SchedulerConfiguration{RejectJobRegistration: true},
			wantOK: true, wantAlgo: "binpack", wantIndex: 2},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h := newHarness(t)
			if tt.first {
				res := h.apply(setSchedulerConfig(&messages.SchedulerConfiguration{SchedulerAlgorithm: "binpack"}, false, 0))
				require.Equal(t, &SetSchedulerConfigResult{Updated: true, Index: 1}, res)
			}
			res := h.apply(setSchedulerConfig(tt.config, tt.cas, tt.index))
			if tt.wantErr != nil {
				require.ErrorIs(t, res.(error), tt.wantErr)
				require.ErrorContains(t, res.(error), "SchedulerAlgorithm")
			} else {
				require.Equal(t, &SetSchedulerConfigResult{Updated: tt.wantOK, Index: h.index}, res)
			}
			got := h.snap().SchedulerConfig()
			require.Equal(t, tt.wantAlgo, got.SchedulerAlgorithm)
			require.Equal(t, tt.wantIndex, got.ModifyIndex)
			require.Equal(t, got.ModifyIndex, h.snap().Index(TableSchedulerConfig))
			require.NotNil(t, got.PreemptionConfig)
			if tt.first {
				require.EqualValues(t, 1, got.CreateIndex)
			}
		})
	}
}

func TestSetSchedulerConfigEvent(t *testing.T) {
	h := newHarness(t)
	h.apply(setSchedulerConfig(&messages.SchedulerConfiguration{PauseEvalBroker: true}, false, 0))
	ev := h.lastEvent()
	require.True(t, ev.SchedulerConfigChanged)
	require.False(t, ev.Empty())
	require.True(t, h.snap().SchedulerConfig().PauseEvalBroker)
}

func TestSchedulerConfigSnapshotRoundTrip(t *testing.T) {
	for _, stored := range []bool{false, true} {
		h := newHarness(t)
		if stored {
			h.apply(setSchedulerConfig(&messages.SchedulerConfiguration{SchedulerAlgorithm: "spread",
				MemoryOversubscriptionEnabled: true, PreemptionConfig: &messages.PreemptionConfig{BatchSchedulerEnabled: true}}, false, 0))
		}
		h.apply(registerNode(testNode("n1", 1000, 1000)))
		sink := persist(t, h.fsm)
		fresh := newHarness(t)
		require.NoError(t, fresh.fsm.Restore(io.NopCloser(bytes.NewReader(sink.Bytes()))))
		require.True(t, proto.Equal(h.snap().SchedulerConfig(), fresh.snap().SchedulerConfig()),
			"stored=%v: got %v", stored, fresh.snap().SchedulerConfig())
		require.True(t, fresh.lastEvent().SchedulerConfigChanged)
	}
}
