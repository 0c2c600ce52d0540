//go:build linux

package cni

import (
	"context"
	"net/netip"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

func TestSetupTeardownCyclesLeaveTheHostAsItWas(t *testing.T) {
	tn := newTestNet(t)
	port := mustFreePort(t)
	// Each cycle has its own deadline: on a loaded 2-core machine a cycle
	// takes about a second, and one deadline for all 51 ran out.
	cycle := func() {
		ctx, cancel := context.WithTimeout(context.Background(), testTimeout)
		defer cancel()
		id := newID()
		req := SetupRequest{AllocID: id, JobID: "job", Group: "g", Ports: []PortMapping{
			{HostPort: port, ContainerPort: 80}, {HostPort: port, ContainerPort: 53, Protocol: "udp"}}}
		res, err := tn.Setup(ctx, req)
		require.NoError(t, err)
		require.NoError(t, tn.Teardown(ctx, id, res.RawResult, req))
		tn.requireGone(t, id, res.IP)
	}
	// The first allocation creates the bridge and the shared chains
	// (CNI-HOSTPORT-*, CNI-FORWARD, CNI-ADMIN), which stay for the next.
	cycle()
	before, err := iptablesState()
	require.NoError(t, err)
	cycles := 50
	if testing.Short() {
		cycles = 5
	}
	for range cycles {
		cycle()
	}
	after, err := iptablesState()
	require.NoError(t, err)
	require.Equal(t, before, after)
	require.Zero(t, tn.delFailures.Load(), "every CNI DEL succeeded")
	// host-local keeps only its lock and its rotation cursor.
	require.ElementsMatch(t, []string{"lock", "last_reserved_ip.0"}, tn.ipamFiles(t))
	names, err := netnsNames(tn.cfg.NetnsDir)
	require.NoError(t, err)
	require.Empty(t, names)
	results, _ := os.ReadDir(filepath.Join(tn.cfg.CacheDir, "results"))
	require.Empty(t, results, "libcni's cache")
}

func TestTeardownCleansUpByForceWhenDelFails(t *testing.T) {
	tn := newTestNet(t)
	ctx := testCtx(t)
	id := newID()
	req := SetupRequest{AllocID: id, Ports: []PortMapping{{HostPort: mustFreePort(t), ContainerPort: 80}}}
	res, err := tn.Setup(ctx, req)
	require.NoError(t, err)
	rules, err := rulesMentioning(id, res.IP)
	require.NoError(t, err)
	require.Len(t, rules, 7, "masquerade (jump + 2), DNAT (jump + 1), firewall (2): %q", rules)
	var chains []string // the allocation's own chains
	for _, line := range rules {
		if tg := (rule{spec: line}).target(); strings.HasPrefix(tg, "CNI-") && !sharedChains[tg] {
			chains = append(chains, tg)
		}
	}
	require.Len(t, chains, 2, "masquerade and DNAT chains")

	// The plugins are gone for a while: every DEL fails.
	away := tn.pluginDir + ".away"
	require.NoError(t, os.Rename(tn.pluginDir, away))
	err = tn.Teardown(ctx, id, res.RawResult, req)
	require.NoError(t, os.Rename(away, tn.pluginDir))
	require.NoError(t, err)
	require.EqualValues(t, 1, tn.delFailures.Load())
	tn.requireGone(t, id, res.IP)
	state, err := iptablesState()
	require.NoError(t, err)
	for _, c := range chains {
		require.NotContains(t, state, c)
	}

	// And the host is usable again.
	again, err := tn.Setup(ctx, req)
	require.NoError(t, err)
	require.NoError(t, tn.Teardown(ctx, id, again.RawResult, req))
}

func TestTeardownOfWhatIsGoneSucceeds(t *testing.T) {
	tn := newTestNet(t)
	ctx := testCtx(t)
	require.NoError(t, tn.Teardown(ctx, newID(), nil, SetupRequest{}), "never set up")
	id := newID()
	res, err := tn.Setup(ctx, SetupRequest{AllocID: id})
	require.NoError(t, err)
	require.NoError(t, tn.Teardown(ctx, id, res.RawResult, SetupRequest{}))
	require.NoError(t, tn.Teardown(ctx, id, res.RawResult, SetupRequest{}), "twice")
	tn.requireGone(t, id, res.IP)
	require.ErrorIs(t, tn.Teardown(ctx, "", nil, SetupRequest{}), ErrInvalidRequest)

	// The netns vanished on its own (its bridge masquerade rules stay
	// behind when bridge's DEL finds no netns): teardown still removes all.
	id = newID()
	res, err = tn.Setup(ctx, SetupRequest{AllocID: id})
	require.NoError(t, err)
	require.NoError(t, removeNetns(res.NetnsPath))
	require.NoError(t, tn.Teardown(ctx, id, res.RawResult, SetupRequest{}))
	tn.requireGone(t, id, res.IP)
}

func TestGCRemovesTheNetworksOfGoneAllocations(t *testing.T) {
	tn := newTestNet(t)
	ctx := testCtx(t)
	setup := func() (*Result, SetupRequest) {
		req := SetupRequest{AllocID: newID(), Ports: []PortMapping{{HostPort: mustFreePort(t), ContainerPort: 80}}}
		res, err := tn.Setup(ctx, req)
		require.NoError(t, err)
		return res, req
	}
	keep, keepReq := setup()
	gone1, req1 := setup()
	gone2, req2 := setup()
	// gone2's netns and libcni cache vanished; only its reservation and
	// rules are left. An orphan reservation and an orphan firewall rule
	// for an address nobody holds, too.
	require.NoError(t, removeNetns(gone2.NetnsPath))
	require.NoError(t, tn.dropCache(req2.AllocID))
	orphan := newID()
	orphanIP := netip.AddrFrom4([4]byte{tn.Subnet().Addr().As4()[0], tn.Subnet().Addr().As4()[1],
		tn.Subnet().Addr().As4()[2], 200})
	require.NoError(t, os.WriteFile(filepath.Join(tn.ipam.dir, "10.255.255.1"), []byte("x"), 0o644))
	require.NoError(t, os.WriteFile(filepath.Join(tn.ipam.dir, tn.Subnet().Addr().Next().Next().Next().Next().Next().String()),
		[]byte(orphan+"\neth0"), 0o644))
	stray := filepath.Join(tn.cfg.NetnsDir, "not-an-alloc")
	require.NoError(t, os.WriteFile(stray, nil, 0o644))
	_, err := runTool(ctx, nil, "iptables", "-w", "-A", firewallChain, "-s", orphanIP.String()+"/32", "-j", "ACCEPT")
	require.NoError(t, err)

	live := map[string]bool{keepReq.AllocID: true}
	require.NoError(t, tn.GC(ctx, func(id string) bool { return live[id] }))

	tn.requireGone(t, req1.AllocID, gone1.IP)
	tn.requireGone(t, req2.AllocID, gone2.IP)
	tn.requireGone(t, orphan, orphanIP)
	require.FileExists(t, stray, "only names in UUID form are allocations")
	require.Equal(t, []string{keep.IP.String()}, reservedAddrs(t, tn), "only the live reservation stays")
	require.NoError(t, checkErr(ctx, tn.Network, keepReq, keep.RawResult), "the live allocation is intact")
	require.NoError(t, os.Remove(stray))
}
