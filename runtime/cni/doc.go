// Package cni is troupe's bridge networking for allocations, built on CNI
// (containernetworking/cni libcni) and the standard plugins: loopback,
// bridge with host-local IPAM, firewall (iptables) and portmap.
//
// Every allocation gets its own network namespace, pinned at
// NetnsDir/<allocation ID>, with eth0 on the host bridge, an address from
// the subnet, a default route through the bridge, masquerading to the
// outside, and its static host ports forwarded to it:
//
//	n, err := cni.New(cni.Config{Logger: log}) // defaults: troupe0, 172.26.64.0/20
//	res, err := n.Setup(ctx, cni.SetupRequest{AllocID: id, JobID: job, Group: group,
//		Ports: []cni.PortMapping{{Label: "http", HostPort: 8080, ContainerPort: 80}}})
//	// run the tasks in res.NetnsPath; persist res.RawResult with the allocation
//	res, err = n.Restore(ctx, id, raw, req) // after an agent restart or a reboot
//	err = n.Teardown(ctx, id, raw, req)     // when the allocation stops
//	err = n.GC(ctx, isLive)                 // after restoring, for what nobody owns
//
// Networks after a host reboot (DESIGN.md, "the three hard problems" 3):
// host-local's state (IPAMDataDir) and libcni's cache are on tmpfs
// (/var/run/cni), never /var/lib/cni, so a reboot wipes them together with
// the namespaces. Restore then finds the namespace gone and runs ADD
// again, which hands out a fresh address without conflicting with a
// reservation from before. When the namespace is still there, Restore runs
// CNI CHECK against the persisted result and recreates the network once
// if the check fails.
//
// Teardown runs CNI DEL with the persisted result and then a forced
// cleanup that removes whatever is left: the iptables rules and chains
// whose comments name the allocation (bridge's masquerading, portmap's
// DNAT), firewall's rules for its address, its host-local reservation,
// libcni's cached result and the namespace. So a failed DEL, a namespace
// that vanished first, or a half-done ADD leave nothing behind.
//
// Host ports: portmap does not check that a port is free. Setup refuses a
// port that a host socket holds or that another allocation forwards, with
// a PortInUseError (errors.Is ErrPortInUse), before creating anything.
//
// The Network's methods run one at a time (they share iptables and
// host-local's state), and across processes too: each holds an flock on
// Config.LockFile (/run/troupe/cni.lock) while it runs, because
// iptables-nft takes no lock and concurrent changes can lose a chain. A
// plugin's iptables change that still collides with another program's
// (ADD finds its chain missing, DEL finds the table busy) is tried again.
// Each method takes a context and blocks, so alloc actors call them from
// a worker. Fake is an in-memory Networker for actor tests.
//
// Everything here needs root and Linux. The tests create their own bridge
// ("trt" + random), subnet (a free /24 in 10.99.0.0/16), state dirs and
// network name, and remove them; they skip when not root (fail under
// CI=true).
package cni
