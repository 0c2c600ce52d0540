package membership

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

func TestClusterMembersSeeEachOther(t *testing.T) {
	checkLeaks(t)
	metas := []Meta{
		testMeta("s1", RoleServer, "global"),
		testMeta("s2", RoleServer, "global"),
		testMeta("c1", RoleClient, "global"),
	}
	ms := startCluster(t, metas...)

	for _, m := range ms {
		members := m.Members()
		require.Len(t, members, 3)
		names := []string{members[0].Name, members[1].Name, members[2].Name}
		require.Equal(t, []string{"c1", "s1", "s2"}, names, "sorted by name")
		for _, meta := range metas {
			mem, ok := memberNamed(m, meta.NodeName)
			require.True(t, ok)
			require.Equal(t, meta, mem.Meta)
			require.Equal(t, StatusAlive, mem.Status)
			require.Equal(t, "127.0.0.1", mem.Addr)
			require.NotZero(t, mem.Port)
			require.Equal(t, meta.Role, mem.Tags["role"])
			require.Equal(t, "id-"+meta.NodeName, mem.Tags["id"])
		}
		servers := m.Servers()
		require.Len(t, servers, 2)
		require.Equal(t, "s1", servers[0].Name)
		require.Equal(t, "s2", servers[1].Name)
		require.True(t, servers[0].IsServer())
	}

	local := ms[2].LocalMember()
	require.Equal(t, "c1", local.Name)
	require.Equal(t, ms[2].GossipAddr(), local.GossipAddr())
	seen, _ := memberNamed(ms[0], "c1")
	require.Equal(t, local.Port, seen.Port, "others dial the port the OS chose")
}

func TestShutdownWithoutLeaveIsFailure(t *testing.T) {
	checkLeaks(t)
	ms := startCluster(t,
		testMeta("s1", RoleServer, "global"),
		testMeta("s2", RoleServer, "global"),
		testMeta("c1", RoleClient, "global"))
	drain(ms[0])

	require.NoError(t, ms[2].Shutdown())

	ev := waitEvent(t, ms[0], EventFailed, "c1")
	require.Equal(t, StatusFailed, ev.Member.Status)
	require.Equal(t, RoleClient, ev.Member.Meta.Role)
	require.Eventually(t, func() bool { return statusOf(ms[1], "c1") == StatusFailed },
		waitFor, 10*time.Millisecond)
	require.Len(t, ms[0].Members(), 3, "failed members are still listed")
	require.Len(t, ms[0].Servers(), 2)
}

func TestLeaveIsRecordedAsLeft(t *testing.T) {
	checkLeaks(t)
	ms := startCluster(t,
		testMeta("s1", RoleServer, "global"),
		testMeta("s2", RoleServer, "global"),
		testMeta("s3", RoleServer, "global"))
	drain(ms[0])

	require.NoError(t, ms[2].Leave(2*time.Second))
	require.NoError(t, ms[2].Shutdown())

	ev := waitEvent(t, ms[0], EventLeave, "s3")
	require.Equal(t, StatusLeft, ev.Member.Status)
	require.Eventually(t, func() bool { return statusOf(ms[1], "s3") == StatusLeft },
		waitFor, 10*time.Millisecond)
	for _, ev := range drain(ms[0]) {
		require.NotEqual(t, EventFailed, ev.Type, "a graceful leave is not a failure")
	}
	servers := ms[0].Servers()
	require.Len(t, servers, 2)
	require.Equal(t, StatusLeft, statusOf(ms[0], "s3"))
}

func TestUpdateMetaPropagates(t *testing.T) {
	checkLeaks(t)
	ms := startCluster(t,
		testMeta("s1", RoleServer, "global"),
		testMeta("c1", RoleClient, "global"))
	drain(ms[1])

	next := testMeta("s1", RoleServer, "global")
	next.HTTPAddr, next.Build, next.Voter = "10.0.0.9:4646", "0.2.0", false
	require.NoError(t, ms[0].UpdateMeta(next))

	ev := waitEvent(t, ms[1], EventUpdate, "s1")
	require.Equal(t, next, ev.Member.Meta)
	seen, ok := memberNamed(ms[1], "s1")
	require.True(t, ok)
	require.Equal(t, "0.2.0", seen.Tags["build"])
	require.Equal(t, "false", seen.Tags["voter"])
	require.Equal(t, next, ms[0].LocalMember().Meta)
}

func TestUpdateMetaRefusesBadMeta(t *testing.T) {
	checkLeaks(t)
	orig := testMeta("s1", RoleServer, "global")
	m := start(t, fastConfig(t, orig))
	tests := []struct {
		name   string
		change func(*Meta)
		want   error
		text   string
	}{
		{"region", func(m *Meta) { m.Region = "eu" }, ErrInvalidMeta, `region cannot change from "global" to "eu"`},
		{"node ID", func(m *Meta) { m.NodeID = "other" }, ErrInvalidMeta, "node ID cannot change"},
		{"role", func(m *Meta) { m.Role, m.Voter, m.BootstrapExpect = RoleClient, false, 0 }, ErrInvalidMeta, "role cannot change"},
		{"missing datacenter", func(m *Meta) { m.Datacenter = "" }, ErrInvalidMeta, "datacenter is empty"},
		{"oversized", func(m *Meta) { m.Build = strings.Repeat("x", 600) }, ErrMetaTooLarge, "limit is 502"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			next := orig
			tt.change(&next)
			err := m.UpdateMeta(next)
			require.ErrorIs(t, err, tt.want)
			require.ErrorContains(t, err, tt.text)
			require.Equal(t, orig, m.LocalMember().Meta, "refused update changes nothing")
		})
	}
}

func TestNewRefusesBadConfig(t *testing.T) {
	checkLeaks(t)
	tests := []struct {
		name   string
		change func(*Config)
		want   error
		text   string
	}{
		{"oversized meta", func(c *Config) { c.Meta.HTTPAddr = strings.Repeat("x", 520) }, ErrMetaTooLarge, "bytes encoded, limit is 502"},
		{"no region", func(c *Config) { c.Meta.Region = "" }, ErrInvalidMeta, "region is empty"},
		{"bad role", func(c *Config) { c.Meta.Role = "worker" }, ErrInvalidMeta, `role "worker"`},
		{"client voter", func(c *Config) { c.Meta.Role = RoleClient }, ErrInvalidMeta, "cannot be a raft voter"},
		{"no name", func(c *Config) { c.Meta.NodeName = "" }, ErrInvalidConfig, "node name is empty"},
		{"bad port", func(c *Config) { c.BindPort = 70000 }, ErrInvalidConfig, "port out of range"},
		{"bad key", func(c *Config) { c.SecretKey = []byte("short") }, ErrStart, "key size"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cfg := fastConfig(t, testMeta("s1", RoleServer, "global"))
			tt.change(&cfg)
			m, err := New(cfg)
			require.Nil(t, m)
			require.ErrorIs(t, err, tt.want)
			require.ErrorContains(t, err, tt.text)
		})
	}
}

func TestOversizedMetaErrorNamesSize(t *testing.T) {
	cfg := fastConfig(t, testMeta("s1", RoleServer, "global"))
	cfg.Meta.Build = strings.Repeat("x", 600)
	_, err := New(cfg)
	require.ErrorIs(t, err, ErrMetaTooLarge)
	require.Regexp(t, `^membership: metadata too large: 7\d\d bytes encoded, limit is 502 \(memberlist's 512`, err.Error())
}

func TestShutdownIsFinal(t *testing.T) {
	checkLeaks(t)
	m := start(t, fastConfig(t, testMeta("s1", RoleServer, "global")))
	waitEvent(t, m, EventJoin, "s1")
	require.NoError(t, m.Shutdown())
	require.NoError(t, m.Shutdown(), "idempotent")

	_, ok := <-m.Events()
	require.False(t, ok, "events channel closed")
	_, err := m.Join([]string{"127.0.0.1:1"})
	require.ErrorIs(t, err, ErrShutdown)
	require.ErrorIs(t, m.Leave(time.Second), ErrShutdown)
	require.ErrorIs(t, m.UpdateMeta(testMeta("s1", RoleServer, "global")), ErrShutdown)
}

func TestLeaveAloneReturnsAtOnce(t *testing.T) {
	checkLeaks(t)
	m := start(t, fastConfig(t, testMeta("s1", RoleServer, "global")))
	require.NoError(t, m.Leave(time.Minute))
	require.Equal(t, StatusLeft, m.LocalMember().Status)
}

func TestJoinReportsFailedAddresses(t *testing.T) {
	checkLeaks(t)
	ms := startCluster(t, testMeta("s1", RoleServer, "global"))
	c := start(t, fastConfig(t, testMeta("c1", RoleClient, "global")))
	dead := "127.0.0.1:1"

	n, err := c.Join([]string{dead, ms[0].GossipAddr()})
	require.Equal(t, 1, n, "joined through the live address")
	var je *JoinError
	require.True(t, errors.As(err, &je))
	require.Equal(t, 2, je.Tried)
	require.Len(t, je.Failed, 1)
	require.Equal(t, dead, je.Failed[0].Addr)
	require.Nil(t, je.Failed[0].Reason)
	require.ErrorIs(t, err, ErrJoin)
	require.False(t, IsRefused(err), "unreachable is worth retrying")
	require.Eventually(t, func() bool { return countStatus(ms[0], StatusAlive) == 2 }, waitFor, 10*time.Millisecond)

	_, err = c.Join(nil)
	require.ErrorIs(t, err, ErrJoin)
}
