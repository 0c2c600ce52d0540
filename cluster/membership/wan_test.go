package membership

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// wanConfig is fastConfig for the WAN pool.
func wanConfig(t testing.TB, meta Meta) Config {
	cfg := fastConfig(t, meta)
	cfg.WAN = true
	return cfg
}

// TestWANPoolJoinsRegions joins servers of two regions in one WAN pool,
// refuses a client there, and gossips a leader flag change.
func TestWANPoolJoinsRegions(t *testing.T) {
	checkLeaks(t)
	a := start(t, wanConfig(t, testMeta("a1.eu", RoleServer, "eu")))
	bMeta := testMeta("b1.us", RoleServer, "us")
	b := start(t, wanConfig(t, bMeta))
	n, err := b.Join([]string{a.GossipAddr()})
	require.NoError(t, err)
	require.Equal(t, 1, n)
	require.Eventually(t, func() bool { return len(a.Servers()) == 2 && len(b.Servers()) == 2 }, waitFor, 10*time.Millisecond)

	bMeta.Leader = true
	require.NoError(t, b.UpdateMeta(bMeta))
	require.Eventually(t, func() bool {
		m, ok := memberNamed(a, "b1.us")
		return ok && m.Meta.Leader && m.Meta.Region == "us"
	}, waitFor, 10*time.Millisecond)

	_, err = New(wanConfig(t, testMeta("c1", RoleClient, "eu")))
	require.ErrorIs(t, err, ErrInvalidConfig)
}

// TestWANPoolRefusesClient: a WAN server refuses a LAN client that
// dials its WAN port, and does not list it.
func TestWANPoolRefusesClient(t *testing.T) {
	checkLeaks(t)
	a := start(t, wanConfig(t, testMeta("a1.eu", RoleServer, "eu")))
	c := start(t, fastConfig(t, testMeta("c1", RoleClient, "eu")))
	_, _ = c.Join([]string{a.GossipAddr()}) // the client's side may count the contact
	require.Never(t, func() bool { return len(a.Members()) != 1 }, 300*time.Millisecond, 10*time.Millisecond)
	require.Equal(t, "a1.eu", a.Members()[0].Name)
}
