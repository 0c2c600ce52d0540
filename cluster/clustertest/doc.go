// Package clustertest is a multi-host test harness for troupe's cluster
// tests: it turns one Linux machine into a small cluster of "hosts", each a
// network namespace with its own address and hostname, all joined to one
// private bridge.
//
// Layout of a run (id is "tt" plus 4 random hex digits, unique per run):
//
//	root namespace:  bridge <id>br, address 10.213.X.1/24 (the gateway),
//	                 veth <id>v<i> enslaved to the bridge, one per host
//	host i:          netns <id>h<i>, interface eth0 = 10.213.X.(10+i)/24,
//	                 loopback up, only the subnet route (no default route)
//
// X is chosen so the subnet overlaps no address or route on the machine
// (172.29.X.0/24 is the fallback range). ip_forward is never touched; when
// iptables exists, FORWARD rules tagged "clustertest-<id>" accept traffic
// between the bridge's ports and drop anything routed on or off the bridge.
// The test process itself (root namespace) reaches every host through the
// bridge, so a test can dial Host.Addr with net.Dial or an HTTP client.
//
// Processes run inside a host with nsenter --net (not "ip netns exec", which
// remounts /sys) and a fresh UTS namespace whose hostname is Host.Name. Their
// stdout and stderr go to one log file per process; the logs are printed
// with t.Log when the test fails.
//
// Usage:
//
//	func TestRaft(t *testing.T) {
//		c := clustertest.New(t, 3) // skips unless root (fails under CI=true)
//		for _, h := range c.Hosts() {
//			_, err := h.Start("agent", troupeBin, "agent", "-bind", h.Addr)
//			require.NoError(t, err)
//		}
//		require.NoError(t, c.Hosts()[0].Partition()) // cut host0 off
//		...
//		require.NoError(t, c.Hosts()[0].Heal())
//		require.NoError(t, c.Hosts()[1].Crash()) // host1 loses power: link, then every process
//	}
//
// New registers a t.Cleanup that kills every process, deletes the
// namespaces, veths, bridge and firewall rules, even when the test fails or
// panics. New also calls CleanupStale, which removes what crashed earlier
// runs left behind: only names of the exact form tt<4 hex>h<n>,
// tt<4 hex>v<n> and tt<4 hex>br whose run no longer holds its lock file in
// /run/troupe-clustertest, so concurrent test binaries never touch each
// other's hosts.
//
// The harness needs root, iproute2 (ip) and util-linux (nsenter, unshare);
// RequireRoot skips the test otherwise, except when CI=true, where it fails.
package clustertest
