package membership

import (
	"errors"
	"testing"
	"time"

	"github.com/hashicorp/memberlist"
	"github.com/stretchr/testify/require"
)

// TestJoinRefused joins a newcomer to a two-member cluster and checks that
// both sides refuse it and that nobody's view changes.
func TestJoinRefused(t *testing.T) {
	tests := []struct {
		name     string
		newcomer Meta
		want     error
		text     string
	}{
		{
			name:     "wrong region",
			newcomer: testMeta("c9", RoleClient, "eu"),
			want:     ErrWrongRegion,
			text:     "is in region global, this cluster is eu",
		},
		{
			name:     "duplicate name",
			newcomer: func() Meta { m := testMeta("c1", RoleClient, "global"); m.NodeID = "id-other"; return m }(),
			want:     ErrDuplicateName,
			text:     "node c1 has ID id-c1, but live member c1",
		},
		{
			name:     "duplicate node ID",
			newcomer: func() Meta { m := testMeta("c9", RoleClient, "global"); m.NodeID = "id-c1"; return m }(),
			want:     ErrDuplicateID,
			text:     "already used by live member c9",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			checkLeaks(t)
			ms := startCluster(t, testMeta("s1", RoleServer, "global"), testMeta("c1", RoleClient, "global"))
			nc := start(t, fastConfig(t, tt.newcomer))

			n, err := nc.Join([]string{ms[0].GossipAddr()})
			require.Zero(t, n)
			require.ErrorIs(t, err, tt.want)
			require.ErrorIs(t, err, ErrJoin)
			require.True(t, IsRefused(err))
			require.ErrorContains(t, err, tt.text)
			var je *JoinError
			require.True(t, errors.As(err, &je))
			require.Equal(t, tt.want, je.Failed[0].Reason)

			unchanged := func() bool {
				for _, m := range ms {
					c1, ok := memberNamed(m, "c1")
					if len(m.Members()) != 2 || !ok || c1.Meta.NodeID != "id-c1" || countStatus(m, StatusAlive) != 2 {
						return false
					}
				}
				return len(nc.Members()) == 1
			}
			require.True(t, unchanged())
			// Gossip and push/pull (300ms) must not let it in later either.
			require.Never(t, func() bool { return !unchanged() }, time.Second, 20*time.Millisecond)
		})
	}
}

// TestAdmit drives the delegate's check directly, as memberlist's Alive
// delegate does for every gossiped alive message.
func TestAdmit(t *testing.T) {
	checkLeaks(t)
	m := start(t, fastConfig(t, testMeta("s1", RoleServer, "global")))
	d := (*delegate)(m)
	addPeer(t, m, testMeta("c1", RoleClient, "global"))
	addPeer(t, m, testMeta("c2", RoleClient, "global"))
	_, ok := m.reg.gone("c2")
	require.True(t, ok)

	withID := func(meta Meta, id string) Meta { meta.NodeID = id; return meta }
	tests := []struct {
		name string
		node *memberlist.Node
		want error
	}{
		{"self again", node(t, testMeta("s1", RoleServer, "global")), nil},
		{"known peer again", node(t, testMeta("c1", RoleClient, "global")), nil},
		{"new peer", node(t, testMeta("c3", RoleClient, "global")), nil},
		{"replaces failed member", node(t, withID(testMeta("c2", RoleClient, "global"), "new")), nil},
		{"other region", node(t, testMeta("c3", RoleClient, "eu")), ErrWrongRegion},
		{"name of live member", node(t, withID(testMeta("c1", RoleClient, "global"), "new")), ErrDuplicateName},
		{"name of self", node(t, withID(testMeta("s1", RoleServer, "global"), "new")), ErrDuplicateName},
		{"ID of live member", node(t, withID(testMeta("c3", RoleClient, "global"), "id-c1")), ErrDuplicateID},
		{"unreadable meta", &memberlist.Node{Name: "x", Meta: []byte("role=server")}, ErrInvalidMeta},
		{"no meta", &memberlist.Node{Name: "x"}, ErrInvalidMeta},
		{"invalid meta", node(t, Meta{Role: RoleServer, Region: "global"}), ErrInvalidMeta},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := d.NotifyAlive(tt.node)
			if tt.want == nil {
				require.NoError(t, err)
				return
			}
			require.ErrorIs(t, err, tt.want)
		})
	}

	// A push/pull merge only checks names and IDs of live peers.
	dead := node(t, withID(testMeta("c1", RoleClient, "global"), "new"))
	dead.State = memberlist.StateDead
	require.NoError(t, d.NotifyMerge([]*memberlist.Node{dead}))
	dead.State = memberlist.StateAlive
	require.ErrorIs(t, d.NotifyMerge([]*memberlist.Node{dead}), ErrDuplicateName)
}

func node(t *testing.T, meta Meta) *memberlist.Node {
	buf, err := encodeMeta(meta, false)
	require.NoError(t, err)
	return &memberlist.Node{Name: meta.NodeName, Addr: []byte{127, 0, 0, 2}, Port: 4648, Meta: buf}
}

func addPeer(t *testing.T, m *Membership, meta Meta) {
	_, err := m.reg.alive(node(t, meta), EventJoin)
	require.NoError(t, err)
}
