package state

import (
	"errors"
	"fmt"
	"regexp"
	"strings"

	memdb "github.com/hashicorp/go-memdb"

	"github.com/troupe-dev/troupe/messages"
)

// Node pools group nodes; a job in a pool is placed only on its nodes.
// "default" and "all" are built in: they always exist and can be neither
// modified nor deleted (Nomad's rule). A node registering in a pool that
// does not exist creates it; a job must name a pool that exists.

// TableNodePools is the node pools table (Index and Wait understand it).
const TableNodePools = "node_pools"

// Built-in node pools.
const (
	// NodePoolDefault is the pool of nodes and jobs that name none.
	NodePoolDefault = "default"
	// NodePoolAll is every node of the cluster; only jobs may name it.
	NodePoolAll = "all"

	nodePoolDefaultDescription = "Default node pool."
	nodePoolAllDescription     = "Node pool with all nodes in the cluster."
	// maxNodePoolDescription is Nomad's bound on a description.
	maxNodePoolDescription = 256
	// idxPool indexes nodes and jobs by node pool.
	idxPool = "pool"
)

// validNodePoolName is Nomad's rule for a pool name.
var validNodePoolName = regexp.MustCompile(`^[a-zA-Z0-9-_]{1,128}$`)

// IsBuiltInNodePool reports whether name is "default" or "all".
func IsBuiltInNodePool(name string) bool { return name == NodePoolDefault || name == NodePoolAll }

// PoolOrDefault is the pool a node or job with pool set to pool is in:
// "" means "default".
func PoolOrDefault(pool string) string {
	if pool == "" {
		return NodePoolDefault
	}
	return pool
}

// builtInNodePools are the pools every store starts with (raft index 1,
// as Nomad's).
func builtInNodePools() []*messages.NodePool {
	return []*messages.NodePool{
		{Name: NodePoolAll, Description: nodePoolAllDescription, CreateIndex: 1, ModifyIndex: 1},
		{Name: NodePoolDefault, Description: nodePoolDefaultDescription, CreateIndex: 1, ModifyIndex: 1},
	}
}

func nodePoolTable() *memdb.TableSchema {
	return table(TableNodePools, index(idxID, true, func(o any) []byte { return key1(o.(*messages.NodePool).Name) }))
}

// poolKey is the pool index key of a node or job.
func poolKey(pool string) []byte { return key1(PoolOrDefault(pool)) }

// ValidateNodePoolName checks a pool name against Nomad's rule.
func ValidateNodePoolName(name string) error {
	if !validNodePoolName.MatchString(name) {
		return fmt.Errorf("%w: invalid name %q, must match regex %s", ErrInvalidNodePool, name, validNodePoolName)
	}
	return nil
}

// NodeNodePool is the pool a registering node goes into: its own, or
// "default" when it names none. "all" is only for jobs.
func NodeNodePool(pool string) (string, error) {
	pool = PoolOrDefault(pool)
	if pool == NodePoolAll {
		return "", fmt.Errorf("%w: a node cannot register in node pool %q (only jobs may use it)", ErrInvalidNodePool, NodePoolAll)
	}
	return pool, ValidateNodePoolName(pool)
}

// CheckUpsertNodePools checks the pools of an UpsertNodePools: at least
// one; each with a valid name, a description of at most 256 bytes, no
// scheduler configuration (troupe's scheduler does not honour one per
// pool; Nomad CE refuses it too), and none built in.
func CheckUpsertNodePools(pools []*messages.NodePool) error {
	if len(pools) == 0 {
		return fmt.Errorf("%w: must specify at least one node pool", ErrInvalidNodePool)
	}
	var errs []error
	for _, p := range pools {
		errs = append(errs, checkUpsertNodePool(p))
	}
	return errors.Join(errs...)
}

func checkUpsertNodePool(p *messages.NodePool) error {
	switch {
	case p == nil:
		return fmt.Errorf("%w: a node pool is null", ErrInvalidNodePool)
	case IsBuiltInNodePool(p.Name):
		return fmt.Errorf("%w: modifying node pool %q is not allowed", ErrNodePoolBuiltIn, p.Name)
	case len(p.Description) > maxNodePoolDescription:
		return fmt.Errorf("%w: node pool %q: description longer than %d", ErrInvalidNodePool, p.Name, maxNodePoolDescription)
	case p.SchedulerConfiguration != nil:
		return fmt.Errorf("%w: node pool %q: SchedulerConfiguration is not supported (the scheduler uses the cluster's configuration for every pool)",
			ErrInvalidNodePool, p.Name)
	}
	return ValidateNodePoolName(p.Name)
}

// CheckDeleteNodePools checks the names of a DeleteNodePools against s: at
// least one; each an existing pool that is not built in, has no nodes and
// no job that is not dead. Every problem is reported.
func CheckDeleteNodePools(s *Snap, names []string) error {
	return checkDeletes(s, names, "node pool", ErrInvalidNodePool, checkDeleteNodePool)
}

// checkDeletes checks each name of a delete command (at least one, else
// empty is the error) with check, reporting every problem.
func checkDeletes(s *Snap, names []string, what string, empty error, check func(*Snap, string) error) error {
	if len(names) == 0 {
		return fmt.Errorf("%w: must specify at least one %s to delete", empty, what)
	}
	var errs []error
	for _, name := range names {
		errs = append(errs, check(s, name))
	}
	return errors.Join(errs...)
}

func checkDeleteNodePool(s *Snap, name string) error {
	switch {
	case name == "":
		return fmt.Errorf("%w: node pool name is empty", ErrInvalidNodePool)
	case s.NodePoolByName(name) == nil:
		return fmt.Errorf("%w: node pool %q not found", ErrNodePoolNotFound, name)
	case IsBuiltInNodePool(name):
		return fmt.Errorf("%w: deleting node pool %q is not allowed", ErrNodePoolBuiltIn, name)
	}
	var errs []error
	if n := len(s.NodesByPool(name)); n > 0 {
		errs = append(errs, fmt.Errorf("%w: node pool %q has %d %s", ErrNodePoolInUse, name, n, pluralize(n, "node")))
	}
	var live []string
	for _, j := range s.JobsByPool(name) {
		if j.Status != messages.JobStatusDead {
			live = append(live, j.Namespace+"/"+j.ID)
		}
	}
	if len(live) > 0 {
		errs = append(errs, fmt.Errorf("%w: node pool %q has non-terminal jobs: %s", ErrNodePoolInUse, name, strings.Join(live, ", ")))
	}
	return errors.Join(errs...)
}

func pluralize(n int, word string) string {
	if n == 1 {
		return word
	}
	return word + "s"
}

// NodePools returns every node pool, by name.
func (s *Snap) NodePools() []*messages.NodePool {
	return list[*messages.NodePool](s.txn, TableNodePools, idxID)
}

// NodePoolByName returns a node pool, or nil.
func (s *Snap) NodePoolByName(name string) *messages.NodePool {
	return first[*messages.NodePool](s.txn, TableNodePools, idxID, name)
}

// NodesByPool returns the nodes in a pool, by ID ("all": every node).
func (s *Snap) NodesByPool(pool string) []*messages.Node {
	if pool == NodePoolAll {
		return s.Nodes()
	}
	if c := s.nodeList(); c != nil {
		return c.inPool(PoolOrDefault(pool))
	}
	return list[*messages.Node](s.txn, TableNodes, idxPool, PoolOrDefault(pool))
}

// JobsByPool returns the current version of the jobs that name a pool
// (exactly: a job in "all" is listed under "all" only), by namespace and
// ID.
func (s *Snap) JobsByPool(pool string) []*messages.Job {
	return list[*messages.Job](s.txn, TableJobs, idxPool, PoolOrDefault(pool))
}
