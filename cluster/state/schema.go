package state

import (
	"encoding/binary"
	"fmt"

	memdb "github.com/hashicorp/go-memdb"

	"github.com/troupe-dev/troupe/messages"
)

// Table names. The exported ones are those Index and Wait understand
// (allocations live outside memdb, in allocTable, but their last-change
// index is recorded here like the others').
const (
	TableJobs       = "jobs"
	TableEvals      = "evals"
	TableAllocs     = "allocs"
	TableNodes      = "nodes"
	TableCSIVolumes = "csi_volumes"
	TableCSIPlugins = "csi_plugins"
	// TableSchedulerConfig holds at most one row, the scheduler
	// configuration (scheduler_config.go).
	TableSchedulerConfig = "scheduler_config"

	tableJobVersions = "job_versions"
	tableIndex       = "index"
	tableJobSummary  = "job_summary"
)

// watchedTables are the tables whose last-change index is recorded.
var watchedTables = []string{TableJobs, TableEvals, TableAllocs, TableNodes, TableCSIVolumes, TableCSIPlugins,
	TableSchedulerConfig, TableNodePools, TableVariables, TableRootKeys, TableNamespaces, TableDeployments}

// Index names.
const (
	idxID     = "id"
	idxJob    = "job"
	idxStatus = "status"
	idxName   = "name"
	// idxPlugin indexes volumes by PluginID.
	idxPlugin = "plugin"
	// idxVolumeID indexes volumes by ID alone: the volume commands name a
	// volume without its namespace, so IDs are unique across namespaces.
	idxVolumeID = "volume_id"
	// idxClaimAlloc indexes volumes by the allocations that hold claims
	// on them (a volume is under each of its claims' allocation IDs).
	idxClaimAlloc = "claim_alloc"
)

// indexEntry records the raft index of the last change to a table.
type indexEntry struct {
	Table string
	Value uint64
}

// keyIndexer is a memdb indexer built from a function that encodes an
// object's key (nil: the object is not in this index). Keys are built from
// parts with keyBuilder: strings NUL-terminated, uint64 as 8 big-endian
// bytes, so a prefix of a compound key is exact: ("ns","a") never matches
// ("ns","ab").
type keyIndexer struct {
	key func(obj any) []byte
}

func (k keyIndexer) FromObject(obj any) (bool, []byte, error) {
	key := k.key(obj)
	return key != nil, key, nil
}

func (k keyIndexer) FromArgs(args ...any) ([]byte, error) { return encodeArgs(args) }

func (k keyIndexer) PrefixFromArgs(args ...any) ([]byte, error) { return encodeArgs(args) }

// claimAllocIndexer indexes a volume under the allocation ID of each of
// its claims (none: not in the index).
type claimAllocIndexer struct{}

func (claimAllocIndexer) FromObject(obj any) (bool, [][]byte, error) {
	var keys [][]byte
	for _, c := range obj.(*messages.CSIVolume).GetClaims() {
		keys = append(keys, key1(c.GetAllocationID()))
	}
	return len(keys) > 0, keys, nil
}

func (claimAllocIndexer) FromArgs(args ...any) ([]byte, error) { return encodeArgs(args) }

func encodeArgs(args []any) ([]byte, error) {
	var key []byte
	for _, p := range args {
		switch v := p.(type) {
		case string:
			key = appendStr(key, v)
		case uint64:
			key = binary.BigEndian.AppendUint64(key, v)
		default:
			return nil, fmt.Errorf("%w: key part of type %T", ErrBadIndexArg, p)
		}
	}
	return key, nil
}

func appendStr(key []byte, s string) []byte {
	key = append(key, s...)
	return append(key, 0)
}

func key1(a string) []byte { return appendStr(make([]byte, 0, len(a)+1), a) }

func key2(a, b string) []byte {
	return appendStr(appendStr(make([]byte, 0, len(a)+len(b)+2), a), b)
}

// optKey1 leaves an empty value out of the index (AllowMissing).
func optKey1(a string) []byte {
	if a == "" {
		return nil
	}
	return key1(a)
}

func index(name string, unique bool, key func(obj any) []byte) *memdb.IndexSchema {
	return &memdb.IndexSchema{Name: name, Unique: unique, AllowMissing: !unique, Indexer: keyIndexer{key: key}}
}

func table(name string, indexes ...*memdb.IndexSchema) *memdb.TableSchema {
	t := &memdb.TableSchema{Name: name, Indexes: map[string]*memdb.IndexSchema{}}
	for _, ix := range indexes {
		t.Indexes[ix.Name] = ix
	}
	return t
}

func schema() *memdb.DBSchema {
	job := func(o any) *messages.Job { return o.(*messages.Job) }
	eval := func(o any) *messages.Evaluation { return o.(*messages.Evaluation) }
	node := func(o any) *messages.Node { return o.(*messages.Node) }
	vol := func(o any) *messages.CSIVolume { return o.(*messages.CSIVolume) }
	tables := []*memdb.TableSchema{
		table(TableJobs, index(idxID, true, func(o any) []byte { return key2(job(o).Namespace, job(o).ID) }),
			index(idxPool, false, func(o any) []byte { return poolKey(job(o).NodePool) })),
		table(tableJobVersions, index(idxID, true, func(o any) []byte {
			return binary.BigEndian.AppendUint64(key2(job(o).Namespace, job(o).ID), job(o).Version)
		})),
		table(TableEvals,
			index(idxID, true, func(o any) []byte { return key1(eval(o).ID) }),
			index(idxJob, false, func(o any) []byte { return key2(eval(o).Namespace, eval(o).JobID) }),
			index(idxStatus, false, func(o any) []byte { return key1(eval(o).Status) })),
		table(TableNodes,
			index(idxID, true, func(o any) []byte { return key1(node(o).ID) }),
			index(idxName, false, func(o any) []byte { return optKey1(node(o).Name) }),
			index(idxPool, false, func(o any) []byte { return poolKey(node(o).NodePool) })),
		table(TableCSIVolumes,
			index(idxID, true, func(o any) []byte { return key2(vol(o).Namespace, vol(o).ID) }),
			index(idxVolumeID, false, func(o any) []byte { return key1(vol(o).ID) }),
			index(idxPlugin, false, func(o any) []byte { return optKey1(vol(o).PluginID) }),
			&memdb.IndexSchema{Name: idxClaimAlloc, AllowMissing: true, Indexer: claimAllocIndexer{}}),
		table(TableCSIPlugins, index(idxID, true, func(o any) []byte { return key1(o.(*messages.CSIPlugin).ID) })),
		schedulerConfigTable(),
		nodePoolTable(),
		namespaceTable(),
		submissionTable(),
		periodicLaunchTable(),
		deploymentTable(),
		serviceTable(),
		table(tableIndex, index(idxID, true, func(o any) []byte { return key1(o.(*indexEntry).Table) })),
		table(tableJobSummary, index(idxID, true, func(o any) []byte {
			return key2(o.(*jobSummary).Namespace, o.(*jobSummary).JobID)
		})),
	}
	tables = append(tables, variableTables()...)
	tables = append(tables, aclTables()...)
	s := &memdb.DBSchema{Tables: map[string]*memdb.TableSchema{}}
	for _, t := range tables {
		s.Tables[t.Name] = t
	}
	return s
}
