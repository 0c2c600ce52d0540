package clientstate

import (
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/troupe-dev/troupe/messages"
)

func TestNetworkSurvivesReopen(t *testing.T) {
	path := filepath.Join(t.TempDir(), "client.db")
	db, err := Open(path, nil)
	require.NoError(t, err)
	db.PutAlloc(&messages.Allocation{ID: "a1", ClientStatus: "running"})
	rec := &AllocNetwork{NetnsPath: "/var/run/netns/a1", Interface: "eth0", IP: "10.0.0.2", Gateway: "10.0.0.1",
		RawResult: []byte(`{"cniVersion":"1.0.0"}`)}
	require.NoError(t, db.PutNetwork("a1", rec))
	rec.RawResult[0] = 'x' // the stored copy is not shared
	require.Error(t, db.PutNetwork("a1", nil))
	require.NoError(t, db.PutNetwork("a2", &AllocNetwork{NetnsPath: "/n/a2"}))
	require.NoError(t, db.DeleteNetwork("a2"))
	require.NoError(t, db.DeleteNetwork("unknown"), "deleting what is not there succeeds")
	require.NoError(t, db.Close())
	require.ErrorIs(t, db.PutNetwork("a1", rec), ErrClosed)
	require.ErrorIs(t, db.DeleteNetwork("a1"), ErrClosed)

	db, err = Open(path, nil)
	require.NoError(t, err)
	defer db.Close()
	got, err := db.Network("a1")
	require.NoError(t, err)
	require.Equal(t, "/var/run/netns/a1", got.NetnsPath)
	require.Equal(t, "10.0.0.2", got.IP)
	require.JSONEq(t, `{"cniVersion":"1.0.0"}`, string(got.RawResult))
	sa, err := db.Alloc("a1")
	require.NoError(t, err)
	require.Equal(t, got, sa.Network)
	c := got.Clone()
	c.RawResult[0] = 'x'
	require.Equal(t, byte('{'), got.RawResult[0])

	gone, err := db.Network("a2")
	require.NoError(t, err)
	require.Nil(t, gone)
	none, err := db.Network("unknown")
	require.NoError(t, err)
	require.Nil(t, none)
}
