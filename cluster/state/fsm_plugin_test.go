package state

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/troupe-dev/troupe/messages"
)

func TestUpsertPluginInstancesHealth(t *testing.T) {
	type counts struct{ ctrlHealthy, ctrlExpected, nodeHealthy, nodeExpected int32 }
	steps := []struct {
		name        string
		cmd         *messages.Command
		plugin      *counts // nil: the plugin is gone
		schedulable bool
	}{
		{"controller healthy, node not", upsertPlugins("n1",
			[]*messages.CSIInfo{testInstance("hostpath", true)}, []*messages.CSIInfo{testInstance("hostpath", false)}),
			&counts{1, 1, 0, 1}, false},
		{"a healthy node on n2", upsertPlugins("n2", nil, []*messages.CSIInfo{testInstance("hostpath", true)}),
			&counts{1, 1, 1, 2}, true},
		{"n1 drops its controller", upsertPlugins("n1", nil, []*messages.CSIInfo{testInstance("hostpath", true)}),
			&counts{0, 0, 2, 2}, false},
		{"the controller comes back on n2", upsertPlugins("n2",
			[]*messages.CSIInfo{testInstance("hostpath", true)}, []*messages.CSIInfo{testInstance("hostpath", true)}),
			&counts{1, 1, 2, 2}, true},
		{"n1 runs nothing", upsertPlugins("n1", nil, nil), &counts{1, 1, 1, 1}, true},
		{"n2 runs nothing", upsertPlugins("n2", nil, nil), nil, false},
	}
	h := newHarness(t)
	require.Nil(t, h.apply(registerVolume(testVolume("v", false))))
	require.Nil(t, h.apply(registerVolume(testVolume("w", false))))
	other := testVolume("x", false)
	other.PluginID = "other"
	require.Nil(t, h.apply(registerVolume(other)))
	created := uint64(0)
	for i, st := range steps {
		t.Run(st.name, func(t *testing.T) {
			require.Nil(t, h.apply(&messages.Command{Time: testNow + int64(i), Cmd: st.cmd.Cmd}))
			require.Equal(t, []string{"hostpath"}, h.lastEvent().PluginsChanged)
			require.Equal(t, []string{"v", "w"}, h.lastEvent().VolumesChanged, "x is another plugin's")
			p := h.snap().CSIPluginByID("hostpath")
			v := h.snap().CSIVolumeByID("default", "v")
			require.Equal(t, st.schedulable, v.Schedulable)
			require.Equal(t, h.index, v.ModifyIndex)
			if st.plugin == nil {
				require.Nil(t, p)
				require.Empty(t, h.snap().CSIPlugins())
				require.Zero(t, v.NodesExpected)
				return
			}
			require.Equal(t, *st.plugin, counts{p.ControllersHealthy, p.ControllersExpected, p.NodesHealthy, p.NodesExpected})
			require.Equal(t, *st.plugin, counts{v.ControllersHealthy, v.ControllersExpected, v.NodesHealthy, v.NodesExpected})
			require.True(t, p.ControllerRequired)
			require.Equal(t, "troupe.hostpath", v.Provider)
			if created == 0 {
				created = p.CreateIndex
			}
			require.Equal(t, created, p.CreateIndex, "kept while the plugin lives")
			require.Equal(t, []any{h.index, testNow + int64(i)}, []any{p.ModifyIndex, p.ModifyTime})
		})
	}
	require.Equal(t, uint64(3), h.snap().CSIVolumeByID("default", "x").ModifyIndex, "x never touched")
}

func TestUpsertPluginInstancesUnchanged(t *testing.T) {
	h := newHarness(t)
	require.Nil(t, h.apply(registerVolume(testVolume("v", false))))
	fp := func() *messages.Command {
		return upsertPlugins("n1", []*messages.CSIInfo{testInstance("hostpath", true)}, []*messages.CSIInfo{testInstance("hostpath", true)})
	}
	require.Nil(t, h.apply(fp()))
	p, v := h.snap().CSIPluginByID("hostpath"), h.snap().CSIVolumeByID("default", "v")
	require.Nil(t, h.apply(fp()))
	require.Same(t, p, h.snap().CSIPluginByID("hostpath"), "the same fingerprint writes nothing")
	require.Same(t, v, h.snap().CSIVolumeByID("default", "v"))
	ev := h.lastEvent()
	require.True(t, ev.Empty(), "%+v", ev)
	require.Equal(t, uint64(2), h.snap().Index(TableCSIPlugins, TableCSIVolumes))
}

func TestUpsertPluginInstancesRefusesBadInput(t *testing.T) {
	tests := []struct {
		name string
		cmd  *messages.Command
	}{
		{"no node", upsertPlugins("", nil, []*messages.CSIInfo{testInstance("hostpath", true)})},
		{"no plugin ID", upsertPlugins("n1", []*messages.CSIInfo{testInstance("", true)}, nil)},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h := newHarness(t)
			require.ErrorIs(t, h.apply(tt.cmd).(error), ErrBadCommand)
			require.Empty(t, h.snap().CSIPlugins())
			require.Empty(t, h.events)
		})
	}
}

func TestVolumeTablesIndexAndWait(t *testing.T) {
	h := newHarness(t)
	require.Nil(t, h.apply(registerNode(testNode("n1", 1000, 1000))))
	require.Nil(t, h.apply(registerVolume(testVolume("v", false))))
	s := h.snap()
	require.Equal(t, uint64(2), s.Index(TableCSIVolumes))
	require.Equal(t, uint64(0), s.Index(TableCSIPlugins))
	require.Equal(t, uint64(1), s.Index(TableNodes))
	require.Equal(t, uint64(2), s.Index(), "no table named: all of them")

	store := h.fsm.Store()
	woke := make(chan uint64, 1)
	go func() { woke <- store.Wait(context.Background(), 2, TableCSIPlugins) }()
	require.Nil(t, h.apply(claimVolume("v", testClaim("a1", "n1", ModeRead, messages.CSIAccessMultiNodeReader))))
	require.Equal(t, uint64(3), store.Snapshot().Index(TableCSIVolumes))
	select {
	case idx := <-woke:
		t.Fatalf("a volume change woke a plugin waiter at %d", idx)
	default:
	}
	require.Nil(t, h.apply(upsertPlugins("n1", nil, []*messages.CSIInfo{testInstance("hostpath", true)})))
	select {
	case idx := <-woke:
		require.Equal(t, uint64(4), idx)
	case <-time.After(5 * time.Second):
		t.Fatal("Wait did not wake on a plugin change")
	}

	require.Equal(t, uint64(4), store.Wait(context.Background(), 3, TableCSIVolumes), "plugin health changed the volume")
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Millisecond)
	defer cancel()
	require.Equal(t, uint64(4), store.Wait(ctx, 4, TableCSIVolumes), "ends with ctx, answering the current index")
}

func TestVolumeReads(t *testing.T) {
	h := newHarness(t)
	require.Nil(t, h.apply(upsertNamespaces(&messages.Namespace{Name: "prod"})))
	for _, v := range []struct{ ns, id, plugin string }{
		{"prod", "b", "hostpath"}, {"default", "c", "hostpath"}, {"default", "a", "other"}, {"prod", "ab", "hostpath"},
	} {
		vol := testVolume(v.id, false)
		vol.Namespace, vol.PluginID = v.ns, v.plugin
		require.Nil(t, h.apply(registerVolume(vol)))
	}
	ids := func(vols []*messages.CSIVolume) []string {
		var out []string
		for _, v := range vols {
			out = append(out, v.Namespace+"/"+v.ID)
		}
		return out
	}
	s := h.snap()
	require.Equal(t, []string{"default/a", "default/c", "prod/ab", "prod/b"}, ids(s.CSIVolumes()))
	require.Equal(t, []string{"default/c", "prod/ab", "prod/b"}, ids(s.CSIVolumesByPlugin("hostpath")))
	require.Equal(t, []string{"prod/ab", "prod/b"}, ids(s.CSIVolumesByNamespace("prod")))
	require.Empty(t, s.CSIVolumesByPlugin("host"), "no prefix match")
	require.Nil(t, s.CSIVolumeByID("default", "b"))
	require.Equal(t, "prod", s.CSIVolumeAnyNamespace("b").Namespace)
	require.Nil(t, s.CSIVolumeAnyNamespace("x"))
	require.Nil(t, s.CSIPluginByID("hostpath"))
}
