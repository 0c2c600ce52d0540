package state

import (
	"encoding/binary"

	memdb "github.com/hashicorp/go-memdb"
	"google.golang.org/protobuf/proto"

	"github.com/troupe-dev/troupe/messages"
)

// Job submissions: the source each stored job version was registered
// from (Nomad's JobSubmission), keyed like the versions themselves by
// (namespace, job, version). One is stored only when a registration
// makes a new version, and goes when its version goes: trimmed with the
// job's old versions, purged or collected with the job.

const tableJobSubmissions = "job_submissions"

func submissionTable() *memdb.TableSchema {
	return table(tableJobSubmissions, index(idxID, true, func(o any) []byte {
		s := o.(*messages.JobSubmission)
		return binary.BigEndian.AppendUint64(key2(s.Namespace, s.JobID), s.Version)
	}))
}

// JobSubmission returns the source a stored version of a job was
// registered from, or nil (none was given, or the version is gone).
func (s *Snap) JobSubmission(ns, id string, version uint64) *messages.JobSubmission {
	return first[*messages.JobSubmission](s.txn, tableJobSubmissions, idxID, ns, id, version)
}

// putSubmission stores sub (nil: nothing) as the submission of job
// version j, which must have just been stored.
func (w *writeTxn) putSubmission(j *messages.Job, sub *messages.JobSubmission) {
	if sub == nil {
		return
	}
	sub.Namespace, sub.JobID, sub.Version, sub.JobModifyIndex = j.Namespace, j.ID, j.Version, j.JobModifyIndex
	w.insert(tableJobSubmissions, sub)
}

// deleteSubmission drops the submission of job version v, if any.
func (w *writeTxn) deleteSubmission(v *messages.Job) {
	w.delete(tableJobSubmissions, &messages.JobSubmission{Namespace: v.Namespace, JobID: v.ID, Version: v.Version})
}

// snapshotChunkBytes bounds the submissions of one snapshot record, well
// under maxRecordBytes: a record of snapshotChunk sources of 1 MB would
// be too large to restore.
const snapshotChunkBytes = 16 << 20

// eachSubmission writes every stored submission to the snapshot.
func eachSubmission(txn *memdb.Txn, cw *chunkWriter) error {
	it, err := txn.Get(tableJobSubmissions, idxID)
	if err != nil {
		return err
	}
	for raw := it.Next(); raw != nil; raw = it.Next() {
		s := raw.(*messages.JobSubmission)
		cw.rec.Submissions = append(cw.rec.Submissions, s)
		cw.bytes += proto.Size(s)
		if cw.bytes >= snapshotChunkBytes {
			if err := cw.flush(); err != nil {
				return err
			}
			continue
		}
		if err := cw.added(); err != nil {
			return err
		}
	}
	return nil
}

func (w *writeTxn) restoreSubmissions(subs []*messages.JobSubmission) {
	for _, s := range subs {
		w.insert(tableJobSubmissions, s)
	}
}
