package clustertest

import (
	"context"
	"errors"
	"slices"
	"strings"
)

// CleanupStale removes what crashed earlier runs left behind: namespaces,
// veths, bridges and fence rules named by this package (tt<4 hex>h<n>,
// tt<4 hex>v<n>, tt<4 hex>br, comment clustertest-tt<4 hex>) whose run no
// longer holds its lock file. Live runs, in this process or another, are
// never touched. It returns what it removed. New calls it.
func CleanupStale(ctx context.Context) ([]string, error) {
	var removed []string
	err := withSetupLock(func() error {
		var err error
		removed, err = removeStale(ctx)
		return err
	})
	return removed, err
}

// staleSet is what one dead run left: names of namespaces, links and the
// iptables delete commands of its fence rules.
type staleSet struct {
	netns, links []string
	rules        [][]string
}

// removeStale does CleanupStale's work; the setup lock must be held.
func removeStale(ctx context.Context) ([]string, error) {
	runs, err := findRuns(ctx)
	if err != nil {
		return nil, err
	}
	ids := make([]string, 0, len(runs))
	for id := range runs {
		ids = append(ids, id)
	}
	slices.Sort(ids)
	var removed []string
	var errs []error
	for _, id := range ids {
		dead, lock, err := probeRun(id)
		if err != nil || !dead {
			errs = append(errs, err)
			continue
		}
		r, err := removeRun(ctx, runs[id])
		removed = append(removed, r...)
		errs = append(errs, err)
		lock.release()
	}
	return removed, errors.Join(errs...)
}

// findRuns groups this package's namespaces, links and rules by run id.
func findRuns(ctx context.Context) (map[string]*staleSet, error) {
	nss, err := listNetns()
	if err != nil {
		return nil, err
	}
	links, err := listLinks(ctx)
	if err != nil {
		return nil, err
	}
	rules, err := listFenceRules(ctx)
	if err != nil {
		return nil, err
	}
	runs := map[string]*staleSet{}
	get := func(id string) *staleSet {
		if runs[id] == nil {
			runs[id] = &staleSet{}
		}
		return runs[id]
	}
	for _, n := range nss {
		if id, ok := runOfNetns(n); ok {
			get(id).netns = append(get(id).netns, n)
		}
	}
	for _, l := range links {
		if id, ok := runOfLink(l); ok {
			get(id).links = append(get(id).links, l)
		}
	}
	for id, dels := range parseFenceRules(rules) {
		get(id).rules = dels
	}
	return runs, nil
}

// removeRun deletes one dead run's leftovers: veths before the bridge, then
// namespaces (killing what runs in them), then fence rules.
func removeRun(ctx context.Context, s *staleSet) ([]string, error) {
	var removed []string
	var errs []error
	links, err := listLinks(ctx)
	if err != nil {
		return nil, err
	}
	present := toSet(links)
	slices.SortFunc(s.links, func(a, b string) int { // bridge last
		return boolCmp(strings.HasSuffix(a, "br"), strings.HasSuffix(b, "br"))
	})
	for _, l := range s.links {
		if err := deleteLink(ctx, l, present); err != nil {
			errs = append(errs, err)
			continue
		}
		removed = append(removed, "link "+l)
	}
	for _, n := range s.netns {
		if err := deleteNetns(ctx, n); err != nil {
			errs = append(errs, err)
			continue
		}
		removed = append(removed, "netns "+n)
	}
	for _, r := range s.rules {
		if _, err := run(ctx, "iptables", r...); err != nil {
			errs = append(errs, err)
			continue
		}
		removed = append(removed, "iptables "+strings.Join(r, " "))
	}
	return removed, errors.Join(errs...)
}

func boolCmp(a, b bool) int {
	switch {
	case a == b:
		return 0
	case a:
		return 1
	default:
		return -1
	}
}
