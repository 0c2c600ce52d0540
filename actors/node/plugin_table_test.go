package node

import (
	"sync"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/troupe-dev/troupe/messages"
)

func TestPluginTableFindsHealthyInstances(t *testing.T) {
	tab := NewPluginTable()
	_, _, ok := tab.Node("hostpath")
	require.False(t, ok, "an empty table has nothing")

	sick := &messages.CSIInfo{PluginID: "hostpath", Healthy: false}
	well := &messages.CSIInfo{PluginID: "hostpath", Healthy: true, NodeInfo: &messages.CSINodeInfo{ID: "n1"}}
	tab.set("a1/t", "/a1.sock", sick, sick)
	_, _, ok = tab.Node("hostpath")
	require.False(t, ok, "an unhealthy instance is not offered")

	tab.set("b2/t", "/b2.sock", nil, well)
	sock, info, ok := tab.Node("hostpath")
	require.True(t, ok)
	require.Equal(t, "/b2.sock", sock)
	require.Equal(t, "n1", info.GetNodeInfo().GetID())
	_, _, ok = tab.Controller("hostpath")
	require.False(t, ok, "b2 runs no controller")
	info.NodeInfo.ID = "changed"
	_, again, _ := tab.Node("hostpath")
	require.Equal(t, "n1", again.GetNodeInfo().GetID(), "callers get copies")

	tab.remove("b2/t")
	_, _, ok = tab.Node("hostpath")
	require.False(t, ok)
	_, _, ok = tab.Node("other")
	require.False(t, ok)
}

// TestPluginTableReadersSeeWholeSnapshots: readers on other goroutines
// (alloc workers) never see a table half written by its owner (go test
// -race checks that they share nothing it changes).
func TestPluginTableReadersSeeWholeSnapshots(t *testing.T) {
	tab := NewPluginTable()
	info := &messages.CSIInfo{PluginID: "hostpath", Healthy: true, NodeInfo: &messages.CSINodeInfo{ID: "n1"}}
	done := make(chan struct{})
	var wg sync.WaitGroup
	for range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				select {
				case <-done:
					return
				default:
				}
				if sock, in, ok := tab.Node("hostpath"); ok {
					require.Equal(t, "/a.sock", sock)
					require.Equal(t, "n1", in.GetNodeInfo().GetID())
				}
			}
		}()
	}
	for range 200 {
		tab.set("a/t", "/a.sock", nil, info)
		info.Healthy = !info.Healthy // the owner's own copy: not the table's
		tab.remove("a/t")
	}
	close(done)
	wg.Wait()
}
