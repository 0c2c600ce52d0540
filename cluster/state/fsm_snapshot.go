package state

import (
	"bufio"
	"errors"
	"fmt"
	"io"

	memdb "github.com/hashicorp/go-memdb"
	"github.com/hashicorp/raft"
	"google.golang.org/protobuf/encoding/protodelim"

	"github.com/troupe-dev/troupe/messages"
)

// snapshotChunk is how many objects one snapshot record holds, so that
// neither Persist nor Restore holds the whole state in encoded form.
const snapshotChunk = 1024

// maxRecordBytes bounds one decoded snapshot record.
const maxRecordBytes = 256 << 20

// fsmSnapshot is a point-in-time view of the store being written out.
type fsmSnapshot struct {
	snap  *Snap
	index uint64
}

// Snapshot captures the store at the last applied index. It is cheap:
// Persist streams from the immutable view while Apply carries on.
func (f *FSM) Snapshot() (raft.FSMSnapshot, error) {
	return &fsmSnapshot{snap: f.store.Snapshot(), index: f.lastIndex.Load()}, nil
}

// Persist writes the state as a stream of varint-length-prefixed
// messages.Snapshot records of at most snapshotChunk objects each; the
// first record carries the index.
func (s *fsmSnapshot) Persist(sink raft.SnapshotSink) error {
	if err := s.write(sink); err != nil {
		_ = sink.Cancel()
		return err
	}
	return sink.Close()
}

func (s *fsmSnapshot) write(w io.Writer) error {
	bw := bufio.NewWriterSize(w, 1<<20)
	cw := &chunkWriter{w: bw, rec: &messages.Snapshot{Index: s.index}}
	txn := s.snap.txn
	steps := []func() error{
		func() error {
			return each(txn, TableNodes, cw, func(r *messages.Snapshot, n *messages.Node) { r.Nodes = append(r.Nodes, n) })
		},
		func() error {
			return each(txn, TableJobs, cw, func(r *messages.Snapshot, j *messages.Job) { r.Jobs = append(r.Jobs, j) })
		},
		func() error {
			return each(txn, tableJobVersions, cw, func(r *messages.Snapshot, j *messages.Job) { r.JobVersions = append(r.JobVersions, j) })
		},
		func() error {
			return each(txn, TableEvals, cw, func(r *messages.Snapshot, e *messages.Evaluation) { r.Evals = append(r.Evals, e) })
		},
		func() error { return eachAlloc(s.snap.allocs, cw) },
		func() error {
			return each(txn, TableCSIPlugins, cw, func(r *messages.Snapshot, p *messages.CSIPlugin) { r.Plugins = append(r.Plugins, p) })
		},
		func() error {
			return each(txn, TableCSIVolumes, cw, func(r *messages.Snapshot, v *messages.CSIVolume) { r.Volumes = append(r.Volumes, v) })
		},
		func() error { return s.writeSchedulerConfig(cw) },
		func() error {
			return each(txn, TableNodePools, cw, func(r *messages.Snapshot, p *messages.NodePool) { r.NodePools = append(r.NodePools, p) })
		},
		func() error {
			return each(txn, TableRootKeys, cw, func(r *messages.Snapshot, k *messages.RootKey) { r.RootKeys = append(r.RootKeys, k) })
		},
		func() error {
			return each(txn, TableVariables, cw, func(r *messages.Snapshot, v *messages.Variable) { r.Variables = append(r.Variables, v) })
		},
		func() error {
			return each(txn, TableNamespaces, cw, func(r *messages.Snapshot, ns *messages.Namespace) { r.Namespaces = append(r.Namespaces, ns) })
		},
		func() error { return eachSubmission(txn, cw) },
		func() error {
			return each(txn, tablePeriodicLaunches, cw, func(r *messages.Snapshot, l *messages.PeriodicLaunch) {
				r.PeriodicLaunches = append(r.PeriodicLaunches, l)
			})
		},
		func() error {
			return each(txn, TableDeployments, cw, func(r *messages.Snapshot, d *messages.Deployment) {
				r.Deployments = append(r.Deployments, d)
			})
		},
		func() error { return eachService(txn, cw) },
		func() error { return eachACL(s.snap, cw) },
		cw.flush,
	}
	for _, step := range steps {
		if err := step(); err != nil {
			return fmt.Errorf("state: write snapshot: %w", err)
		}
	}
	return bw.Flush()
}

// Release is a no-op: the view holds no resources.
func (s *fsmSnapshot) Release() {}

// chunkWriter accumulates objects into a record and writes it when full.
type chunkWriter struct {
	w   io.Writer
	rec *messages.Snapshot
	n   int
	// bytes is the size of the record's large objects (job submissions
	// of up to 1 MB each), which flush it early.
	bytes int
}

func (c *chunkWriter) added() error {
	c.n++
	if c.n < snapshotChunk {
		return nil
	}
	return c.flush()
}

func (c *chunkWriter) flush() error {
	if c.n == 0 && c.rec.Index == 0 {
		return nil
	}
	if _, err := protodelim.MarshalTo(c.w, c.rec); err != nil {
		return err
	}
	c.rec, c.n, c.bytes = &messages.Snapshot{}, 0, 0
	return nil
}

func each[T any](txn *memdb.Txn, table string, cw *chunkWriter, add func(*messages.Snapshot, T)) error {
	it, err := txn.Get(table, idxID)
	if err != nil {
		return err
	}
	for raw := it.Next(); raw != nil; raw = it.Next() {
		add(cw.rec, raw.(T))
		if err := cw.added(); err != nil {
			return err
		}
	}
	return nil
}

func eachAlloc(t *allocTable, cw *chunkWriter) error {
	var err error
	t.byID.Range(func(a *messages.Allocation) bool {
		cw.rec.Allocs = append(cw.rec.Allocs, a)
		err = cw.added()
		return err == nil
	})
	return err
}

// Restore replaces the whole state with the snapshot read from rc, then
// publishes an Event naming every pending evaluation, node, job, volume
// and plugin.
func (f *FSM) Restore(rc io.ReadCloser) error {
	defer rc.Close()
	fresh := NewStore()
	w := newWriteTxn(fresh, 0, f.now().UnixNano(), f.logger)
	br := bufio.NewReaderSize(rc, 1<<20)
	opts := protodelim.UnmarshalOptions{MaxSize: maxRecordBytes}
	for {
		rec := &messages.Snapshot{}
		err := opts.UnmarshalFrom(br, rec)
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			w.abort()
			return fmt.Errorf("%w: %w", ErrBadSnapshot, err)
		}
		w.restoreRecord(rec)
	}
	w.commitRestore()
	f.store.replace(fresh.db, fresh.allocs, fresh.tables)
	f.lastIndex.Store(w.index)
	f.store.setApplied(w.index)
	f.publish(restoreEvent(f.store.Snapshot(), w.index, w.now))
	return nil
}

func (w *writeTxn) restoreRecord(rec *messages.Snapshot) {
	if rec.Index > w.index {
		w.index = rec.Index
	}
	for _, n := range rec.Nodes {
		w.countNode(nil, n)
		w.insert(TableNodes, n)
	}
	for _, j := range rec.Jobs {
		w.insert(TableJobs, j)
	}
	for _, j := range rec.JobVersions {
		w.insert(tableJobVersions, j)
	}
	for _, e := range rec.Evals {
		w.countEval(e, +1)
		w.insert(TableEvals, e)
	}
	for _, a := range rec.Allocs {
		w.putAlloc(nil, a)
	}
	for _, p := range rec.Plugins {
		w.insert(TableCSIPlugins, p)
	}
	for _, v := range rec.Volumes {
		w.insert(TableCSIVolumes, v)
	}
	if c := rec.SchedulerConfig; c != nil {
		w.insert(TableSchedulerConfig, c)
	}
	w.restoreNodePools(rec.NodePools)
	w.restoreVariables(rec)
	w.restoreNamespaces(rec.Namespaces)
	w.restoreSubmissions(rec.Submissions)
	w.restoreLaunches(rec.PeriodicLaunches)
	w.restoreDeployments(rec.Deployments)
	w.restoreServices(rec.ServiceRegistrations)
	w.restoreACL(rec)
}

// commitRestore flushes the derived tables and sets every table's index
// to the snapshot's (job statuses were saved as they were).
func (w *writeTxn) commitRestore() {
	w.flushDerived()
	all := make(map[string]bool, len(watchedTables))
	for _, t := range watchedTables {
		w.insert(tableIndex, &indexEntry{Table: t, Value: w.index})
		all[t] = true
	}
	w.store.commit(w.txn, w.allocTable(false), all, w.index)
}

func restoreEvent(s *Snap, index uint64, now int64) Event {
	b := newEventBuilder(index)
	b.schedulerConfig() // the restored one may differ from what was in force
	for _, e := range s.EvalsByStatus(messages.EvalStatusPending) {
		b.eval(e, now)
	}
	for _, n := range s.Nodes() {
		b.nodeUpdated(n.ID)
		b.nodeChanged(n.ID)
	}
	for _, j := range s.Jobs() {
		b.job(JobKey(j.Namespace, j.ID))
	}
	for _, v := range s.CSIVolumes() {
		b.volume(v.ID)
	}
	for _, p := range s.CSIPlugins() {
		b.plugin(p.ID)
	}
	return b.build()
}
