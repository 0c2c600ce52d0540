package device

import (
	"context"
	"errors"
	"log/slog"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/troupe-dev/troupe/messages"
)

func testLogger(t *testing.T) *slog.Logger {
	return slog.New(slog.NewTextHandler(t.Output(), &slog.HandlerOptions{Level: slog.LevelDebug}))
}

// twoFakes returns a Manager over fake "a" (nvidia/gpu/T4: a1, a2) and
// fake "b" (acme/fpga/X: b1; nvidia/gpu/T4: b2).
func twoFakes(t *testing.T) (*Manager, *Fake, *Fake) {
	a := NewFake(FakeGroup("nvidia", "gpu", "T4", "a1", "a2")).Named("a")
	b := NewFake(FakeGroup("acme", "fpga", "X", "b1"), FakeGroup("nvidia", "gpu", "T4", "b2")).Named("b")
	m, err := NewManager(testLogger(t), a, b)
	require.NoError(t, err)
	return m, a, b
}

// summary maps GroupID to "id:healthy" per instance.
func summary(groups []*messages.NodeDeviceResource) map[string][]string {
	out := map[string][]string{}
	for _, g := range groups {
		for _, inst := range g.Instances {
			h := "ok"
			if !inst.Healthy {
				h = "bad"
			}
			out[GroupID(g)] = append(out[GroupID(g)], inst.ID+":"+h)
		}
	}
	return out
}

func TestNewManagerRejectsBadPlugins(t *testing.T) {
	_, err := NewManager(nil, NewFake(), NewFake())
	require.ErrorIs(t, err, ErrDuplicatePlugin)
	_, err = NewManager(nil, NewFake(), nil)
	require.ErrorIs(t, err, ErrInvalidPlugin)
	_, err = NewManager(nil, NewFake().Named(""))
	require.ErrorIs(t, err, ErrInvalidPlugin)
}

func TestManagerFingerprintMergesAndSorts(t *testing.T) {
	m, _, _ := twoFakes(t)
	groups, err := m.Fingerprint(context.Background())
	require.NoError(t, err)
	require.Len(t, groups, 2)
	require.Equal(t, "acme/fpga/X", GroupID(groups[0]))
	require.Equal(t, "nvidia/gpu/T4", GroupID(groups[1]))
	require.Equal(t, map[string][]string{
		"acme/fpga/X":   {"b1:ok"},
		"nvidia/gpu/T4": {"a1:ok", "a2:ok", "b2:ok"},
	}, summary(groups))
}

func TestManagerDropsInstanceReportedTwice(t *testing.T) {
	a := NewFake(FakeGroup("nvidia", "gpu", "T4", "x")).Named("a")
	b := NewFake(FakeGroup("nvidia", "gpu", "T4", "x", "y")).Named("b")
	m, err := NewManager(testLogger(t), a, b)
	require.NoError(t, err)
	groups, err := m.Fingerprint(context.Background())
	require.NoError(t, err)
	require.Equal(t, map[string][]string{"nvidia/gpu/T4": {"x:ok", "y:ok"}}, summary(groups))

	_, err = m.Reserve([]string{"x"})
	require.NoError(t, err)
	require.Equal(t, [][]string{{"x"}}, a.Reserved(), "x belongs to the first plugin")
	require.Empty(t, b.Reserved())
}

func TestManagerFailedPluginKeepsInstancesUnhealthy(t *testing.T) {
	m, a, _ := twoFakes(t)
	_, err := m.Fingerprint(context.Background())
	require.NoError(t, err)

	a.Inject(func(f *Fake) { f.NextFingerprintErr = errors.New("driver gone") })
	groups, err := m.Fingerprint(context.Background())
	require.NoError(t, err, "one failing plugin does not fail the fingerprint")
	require.Equal(t, map[string][]string{
		"acme/fpga/X":   {"b1:ok"},
		"nvidia/gpu/T4": {"a1:bad", "a2:bad", "b2:ok"},
	}, summary(groups))
	require.Equal(t, "fingerprint failed: driver gone", groups[1].Instances[0].HealthDescription)

	groups, err = m.Fingerprint(context.Background())
	require.NoError(t, err)
	require.Equal(t, []string{"a1:ok", "a2:ok", "b2:ok"}, summary(groups)["nvidia/gpu/T4"], "healthy again once it recovers")
}

func TestManagerFailedPluginWithoutHistoryReportsNothing(t *testing.T) {
	m, a, _ := twoFakes(t)
	a.Inject(func(f *Fake) { f.NextFingerprintErr = errors.New("boom") })
	groups, err := m.Fingerprint(context.Background())
	require.NoError(t, err)
	require.Equal(t, map[string][]string{"acme/fpga/X": {"b1:ok"}, "nvidia/gpu/T4": {"b2:ok"}}, summary(groups))
}

func TestManagerFingerprintStopsOnCancel(t *testing.T) {
	m, a, _ := twoFakes(t)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	_, err := m.Fingerprint(ctx)
	require.ErrorIs(t, err, context.Canceled)
	require.Zero(t, a.Calls(MethodFingerprint))
}

func TestManagerReserveRoutesAndMerges(t *testing.T) {
	m, a, b := twoFakes(t)
	_, err := m.Fingerprint(context.Background())
	require.NoError(t, err)

	res, err := m.Reserve([]string{"b2", "a1", "b1", "a1"})
	require.NoError(t, err)
	require.Equal(t, [][]string{{"a1"}}, a.Reserved())
	require.Equal(t, [][]string{{"b2", "b1"}}, b.Reserved())
	require.Equal(t, map[string]string{"A_VISIBLE_DEVICES": "a1", "B_VISIBLE_DEVICES": "b2,b1"}, res.Envs)
	var paths []string
	for _, d := range res.Devices {
		paths = append(paths, d.HostPath)
	}
	require.Equal(t, []string{"/dev/fake-a1", "/dev/fake-b2", "/dev/fake-b1"}, paths)
}

func TestManagerReserveFingerprintsWhenIDsUnknown(t *testing.T) {
	m, a, b := twoFakes(t)
	_, err := m.Reserve([]string{"a2"})
	require.NoError(t, err, "a restarted agent reserves before its first fingerprint")
	require.Equal(t, 1, a.Calls(MethodFingerprint))
	require.Equal(t, 1, b.Calls(MethodFingerprint))

	_, err = m.Reserve([]string{"a2", "nope"})
	require.ErrorIs(t, err, ErrUnknownInstance)
	require.ErrorContains(t, err, "nope")
	require.Equal(t, 2, a.Calls(MethodFingerprint), "one refresh per Reserve, no more")
	require.Len(t, a.Reserved(), 1, "nothing reserved when an ID is unknown")

	_, err = m.Reserve(nil)
	require.ErrorIs(t, err, ErrNoInstances)
}

func TestManagerReservePluginError(t *testing.T) {
	m, a, _ := twoFakes(t)
	_, err := m.Fingerprint(context.Background())
	require.NoError(t, err)
	a.Inject(func(f *Fake) { f.NextReserveErr = ErrUnavailable })
	_, err = m.Reserve([]string{"a1", "b1"})
	require.ErrorIs(t, err, ErrUnavailable)
	require.ErrorContains(t, err, "plugin a")
}

func TestReservationMergeConflicts(t *testing.T) {
	r := &Reservation{}
	require.NoError(t, r.merge(&Reservation{
		Envs:    map[string]string{"X": "1"},
		Devices: []DeviceNode{{HostPath: "/dev/ctl", ContainerPath: "/dev/ctl", Permissions: "rwm"}},
		Mounts:  []Mount{{HostPath: "/lib/a", ContainerPath: "/lib/a", ReadOnly: true}},
	}))
	require.NoError(t, r.merge(&Reservation{
		Envs:         map[string]string{"X": "1", "Y": "2"},
		IsolatedEnvs: map[string]string{"X": "0"},
		Devices:      []DeviceNode{{HostPath: "/dev/ctl", ContainerPath: "/dev/ctl", Permissions: "rwm"}},
		Mounts:       []Mount{{HostPath: "/lib/a", ContainerPath: "/lib/a", ReadOnly: true}},
	}))
	require.Equal(t, map[string]string{"X": "1", "Y": "2"}, r.Envs)
	require.Equal(t, map[string]string{"X": "0"}, r.IsolatedEnvs)
	require.Len(t, r.Devices, 1, "a shared node is kept once")
	require.Len(t, r.Mounts, 1)

	require.ErrorIs(t, r.merge(&Reservation{Envs: map[string]string{"X": "2"}}), ErrReservationConflict)
	require.ErrorIs(t, r.merge(&Reservation{IsolatedEnvs: map[string]string{"X": "1"}}), ErrReservationConflict)
	require.ErrorIs(t, r.merge(&Reservation{Devices: []DeviceNode{{HostPath: "/dev/other", ContainerPath: "/dev/ctl"}}}), ErrReservationConflict)
	require.ErrorIs(t, r.merge(&Reservation{Mounts: []Mount{{HostPath: "/lib/b", ContainerPath: "/lib/a"}}}), ErrReservationConflict)
}

func TestManagerStatsSkipsFailingPlugin(t *testing.T) {
	m, a, b := twoFakes(t)
	a.SetStats(map[string]*InstanceStats{"a1": {Values: map[string]float64{"temperature_c": 40}}})
	b.SetStats(map[string]*InstanceStats{"b1": {Values: map[string]float64{"temperature_c": 50}}})
	stats, err := m.Stats(context.Background())
	require.NoError(t, err)
	require.Len(t, stats, 2)
	require.Equal(t, 50.0, stats["b1"].Values["temperature_c"])

	b.Inject(func(f *Fake) { f.NextStatsErr = errors.New("busy") })
	stats, err = m.Stats(context.Background())
	require.NoError(t, err)
	require.Equal(t, []string{"a1"}, keys(stats))
}

func keys(m map[string]*InstanceStats) []string {
	var out []string
	for k := range m {
		out = append(out, k)
	}
	return out
}

// plain hides Fake's Watch.
type plain struct{ Plugin }

func TestManagerWatch(t *testing.T) {
	a := NewFake(FakeGroup("nvidia", "gpu", "T4", "a1")).Named("a")
	b := NewFake(FakeGroup("acme", "fpga", "X", "b1")).Named("b")
	c := NewFake(FakeGroup("acme", "fpga", "Y", "c1")).Named("c")
	m, err := NewManager(testLogger(t), a, b, plain{c})
	require.NoError(t, err)

	var changes atomic.Int32
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- m.Watch(ctx, func() { changes.Add(1) }) }()
	require.Eventually(t, func() bool { return a.Watchers() == 1 && b.Watchers() == 1 }, 5*time.Second, time.Millisecond)
	require.Zero(t, c.Watchers(), "a plugin that is no Watcher is not watched")

	require.True(t, b.SetHealth("b1", false, "overheated"))
	require.Eventually(t, func() bool { return changes.Load() == 1 }, 5*time.Second, time.Millisecond)
	groups, err := m.Fingerprint(context.Background())
	require.NoError(t, err)
	require.Equal(t, []string{"b1:bad"}, summary(groups)["acme/fpga/X"])

	cancel()
	require.NoError(t, <-done)
	require.Zero(t, a.Watchers()+b.Watchers())
}

func TestManagerWatchWithoutWatchers(t *testing.T) {
	m, err := NewManager(nil, plain{NewFake()})
	require.NoError(t, err)
	require.NoError(t, m.Watch(context.Background(), func() { t.Error("no change expected") }), "returns at once")
}

type closer struct {
	*Fake
	closed int
}

func (c *closer) Close() error { c.closed++; return errors.New("close failed") }

func TestManagerClose(t *testing.T) {
	c := &closer{Fake: NewFake()}
	m, err := NewManager(nil, c, NewFake().Named("other"))
	require.NoError(t, err)
	require.ErrorContains(t, m.Close(), "close fake: close failed")
	require.Equal(t, 1, c.closed)
}

func TestManagerGroupsIsTheLastFingerprint(t *testing.T) {
	f := NewFake(FakeGroup("acme", "fpga", "X1", "f1", "f2"))
	m, err := NewManager(nil, f)
	require.NoError(t, err)
	require.Empty(t, m.Groups(), "nothing before the first fingerprint")
	got, err := m.Fingerprint(context.Background())
	require.NoError(t, err)
	groups := m.Groups()
	require.Len(t, groups, 1)
	require.Equal(t, "X1", groups[0].GetName())
	require.Equal(t, got[0].GetInstances()[1].GetID(), groups[0].GetInstances()[1].GetID())
	groups[0].Name = "changed"
	require.Equal(t, "X1", m.Groups()[0].GetName(), "a copy")
}
