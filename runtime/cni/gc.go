package cni

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"net/netip"
	"os"
	"regexp"

	"github.com/containernetworking/cni/libcni"
	"github.com/containernetworking/cni/pkg/types"
	"github.com/containernetworking/cni/pkg/utils"
)

// uuidRE matches an allocation ID; GC only removes netns files so named.
var uuidRE = regexp.MustCompile(`^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$`)

// addrRE finds the /32 addresses of firewall's rules.
var addrRE = regexp.MustCompile(`(?:^| )-[sd] (\d+\.\d+\.\d+\.\d+)/32(?: |$)`)

// GC removes the network state of every allocation that live says is
// gone: it runs libcni's GC (CNI DEL for each stale attachment in libcni's
// cache; plugin GC too once the network's version is 1.1.0, which the
// Debian plugins do not speak), then tears down each stale allocation
// found in host-local's reservations, in NetnsDir (names in UUID form
// only) and in the iptables comments of this network, and finally removes
// firewall rules for addresses of the subnet that nobody holds.
func (n *Network) GC(ctx context.Context, live func(allocID string) bool) error {
	release, err := n.acquire(ctx)
	if err != nil {
		return err
	}
	defer release()
	stale := map[string]bool{}
	consider := func(id string) {
		if utils.ValidateContainerID(id) == nil && !live(id) {
			stale[id] = true
		}
	}
	var errs []error
	atts, _ := n.cni.GetCachedAttachments("")
	var valid []types.GCAttachment
	for _, a := range atts {
		if a.Network != n.list.Name {
			continue
		}
		if live(a.ContainerID) {
			valid = append(valid, types.GCAttachment{ContainerID: a.ContainerID, IfName: a.IfName})
		} else {
			stale[a.ContainerID] = true
		}
	}
	if err := n.cni.GCNetworkList(ctx, n.list, &libcni.GCArgs{ValidAttachments: valid}); err != nil {
		errs = append(errs, err)
	}
	reserved, err := n.ipam.reservations()
	errs = append(errs, err)
	for _, id := range reserved {
		consider(id)
	}
	names, err := netnsNames(n.cfg.NetnsDir)
	errs = append(errs, err)
	for _, name := range names {
		if uuidRE.MatchString(name) {
			consider(name)
		}
	}
	ids, err := n.ruleOwners(ctx)
	errs = append(errs, err)
	for _, id := range ids {
		consider(id)
	}
	for id := range stale {
		n.log.Info("removing the network of a gone allocation", "alloc_id", id)
		errs = append(errs, n.teardown(ctx, SetupRequest{AllocID: id}, nil, false))
	}
	errs = append(errs, sweep(ctx, n.orphanFirewallRule()))
	if err := errors.Join(errs...); err != nil {
		return fmt.Errorf("cni: gc: %w", err)
	}
	return nil
}

// ruleOwners returns the container IDs named in this network's iptables
// comments.
func (n *Network) ruleOwners(ctx context.Context) ([]string, error) {
	var ids []string
	for _, name := range sweptTables {
		t, err := saveTable(ctx, name)
		if err != nil {
			return ids, err
		}
		for _, r := range t.rules {
			if net, id := r.owner(); net == n.list.Name {
				ids = append(ids, id)
			}
		}
	}
	return ids, nil
}

// orphanFirewallRule matches firewall rules for an address of the subnet
// that host-local has not reserved.
func (n *Network) orphanFirewallRule() func(string, rule) bool {
	reserved, err := n.ipam.reservations()
	return func(table string, r rule) bool {
		if err != nil || table != "filter" || r.chain != firewallChain {
			return false
		}
		m := addrRE.FindStringSubmatch(r.spec)
		if m == nil {
			return false
		}
		ip, perr := netip.ParseAddr(m[1])
		_, held := reserved[ip]
		return perr == nil && n.subnet.Contains(ip) && !held
	}
}

// netnsNames lists the entries of dir.
func netnsNames(dir string) ([]string, error) {
	entries, err := os.ReadDir(dir)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	names := make([]string, 0, len(entries))
	for _, e := range entries {
		names = append(names, e.Name())
	}
	return names, err
}
