package nvidia

import (
	"context"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/NVIDIA/go-nvml/pkg/nvml"
	"github.com/NVIDIA/go-nvml/pkg/nvml/mock"
	"github.com/stretchr/testify/require"

	"github.com/troupe-dev/troupe/runtime/device"
)

// watch runs p.Watch until the test ends and counts onChange calls.
func watch(t *testing.T, p *Plugin) (*atomic.Int32, func() error) {
	t.Helper()
	var changes atomic.Int32
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- p.Watch(ctx, func() { changes.Add(1) }) }()
	stop := sync.OnceValue(func() error {
		cancel()
		return <-done
	})
	t.Cleanup(func() { _ = stop() })
	return &changes, stop
}

func TestWatchXIDMarksGPUUnhealthy(t *testing.T) {
	p, s, _ := mockPlugin(t)
	uuids := s.UUIDs()
	changes, stop := watch(t, p)
	require.Eventually(t, func() bool { return s.Registered() == 8 }, 5*time.Second, time.Millisecond)

	s.SendXID(1, 13) // caused by an application: ignored
	s.SendXID(4, 79) // fell off the bus
	require.Eventually(t, func() bool { return health(t, fingerprint(t, p))[uuids[4]] != "" }, 5*time.Second, time.Millisecond)
	h := health(t, fingerprint(t, p))
	require.Equal(t, "XID critical error 79", h[uuids[4]])
	for i, id := range uuids {
		if i != 4 {
			require.Empty(t, h[id], "GPU %d", i)
		}
	}

	s.SendXID(4, 48) // already unhealthy: no change
	s.SendXID(6, 48)
	require.Eventually(t, func() bool { return health(t, fingerprint(t, p))[uuids[6]] != "" }, 5*time.Second, time.Millisecond)
	require.Equal(t, "XID critical error 79", health(t, fingerprint(t, p))[uuids[4]], "the first XID stays")

	require.NoError(t, stop()) // Watch has returned: every onChange has run
	require.EqualValues(t, 2, changes.Load(), "one change per GPU turning unhealthy")
	require.Zero(t, s.OpenEventSets(), "the event set is freed")
}

func TestWatchWithoutEventsDegrades(t *testing.T) {
	p, s, logs := mockPlugin(t)
	s.WithoutEvents() // go-nvml's plain mock: the event calls panic
	for range 2 {
		err := p.Watch(context.Background(), func() { t.Error("no change expected") })
		require.ErrorIs(t, err, device.ErrWatchUnsupported)
	}
	require.Equal(t, 1, logs.count("no XID events"), "logged once")
	require.Zero(t, s.OpenEventSets())
	require.Len(t, fingerprint(t, p)[0].Instances, 8, "fingerprints still work")

	m, err := device.NewManager(nil, p)
	require.NoError(t, err)
	require.NoError(t, m.Watch(context.Background(), func() {}), "the Manager skips it")
}

func TestWatchWaitFailureEndsWatch(t *testing.T) {
	p, s, _ := mockPlugin(t)
	freed := false
	s.EventSetCreateFunc = func() (nvml.EventSet, nvml.Return) {
		return &mock.EventSet{
			WaitFunc: func(uint32) (nvml.EventData, nvml.Return) { return nvml.EventData{}, nvml.ERROR_UNKNOWN },
			FreeFunc: func() nvml.Return { freed = true; return nvml.SUCCESS },
		}, nvml.SUCCESS
	}
	err := p.Watch(context.Background(), func() {})
	require.ErrorIs(t, err, nvml.ERROR_UNKNOWN)
	require.NotErrorIs(t, err, device.ErrWatchUnsupported)
	require.True(t, freed)
}

func TestHandleEvent(t *testing.T) {
	p, s, _ := mockPlugin(t)
	fingerprint(t, p)

	require.False(t, p.HandleEvent(nvml.EventData{EventType: nvml.EventTypePState, Device: s.Devices[0]}), "not an XID")
	require.False(t, p.HandleEvent(nvml.EventData{EventType: nvml.EventTypeXidCriticalError, EventData: 43, Device: s.Devices[0]}), "ignored XID")
	require.True(t, p.HandleEvent(nvml.EventData{EventType: nvml.EventTypeXidCriticalError, EventData: 79}), "no device: every GPU")
	for id, desc := range health(t, fingerprint(t, p)) {
		require.Equal(t, "XID critical error 79", desc, id)
	}
	require.False(t, p.HandleEvent(nvml.EventData{EventType: nvml.EventTypeXidCriticalError, EventData: 79}), "no new change")
}

func TestIgnoredXidsConfig(t *testing.T) {
	s := newMock()
	p, _ := newPlugin(t, Config{NVML: s, IgnoredXids: []uint64{}})
	require.True(t, p.HandleEvent(nvml.EventData{EventType: nvml.EventTypeXidCriticalError, EventData: 13, Device: s.Devices[0]}),
		"an empty list ignores nothing")
}
