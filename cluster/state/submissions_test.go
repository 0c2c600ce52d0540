package state

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
	"google.golang.org/protobuf/encoding/protodelim"
	"google.golang.org/protobuf/proto"

	"github.com/troupe-dev/troupe/messages"
)

func registerWithSource(j *messages.Job, src string) *messages.Command {
	c := registerJob(j, nil)
	c.GetRegisterJob().Submission = &messages.JobSubmission{
		Source: src, Format: "hcl2", VariableFlags: map[string]string{"cpu": fmt.Sprint(j.TaskGroups[0].Tasks[0].Resources.CPU)},
	}
	return c
}

// TestSubmissionPerVersion: each new version keeps its own source; a
// registration that makes no new version leaves the stored one alone,
// and one without a submission stores none.
func TestSubmissionPerVersion(t *testing.T) {
	h := newHarness(t)
	h.apply(registerWithSource(testJob("web", 100, 100), "v0 source"))
	h.apply(registerWithSource(testJob("web", 200, 100), "v1 source"))
	h.apply(registerWithSource(testJob("web", 200, 100), "same spec, other text")) // no new version
	h.apply(registerJob(testJob("web", 300, 100), nil))                            // v2, no source

	s := h.snap()
	v0, v1 := s.JobSubmission("default", "web", 0), s.JobSubmission("default", "web", 1)
	require.NotNil(t, v0)
	require.NotNil(t, v1)
	require.Equal(t, "v0 source", v0.Source)
	require.Equal(t, map[string]string{"cpu": "100"}, v0.VariableFlags)
	require.Equal(t, "v1 source", v1.Source, "an unchanged job keeps its version's source")
	require.Equal(t, []any{"default", "web", uint64(1), uint64(2)}, []any{v1.Namespace, v1.JobID, v1.Version, v1.JobModifyIndex})
	require.Nil(t, s.JobSubmission("default", "web", 2), "registered without a source")
	require.Nil(t, s.JobSubmission("default", "web", 3))
}

// TestSubmissionTrimmedWithItsVersion: a version trimmed away takes its
// submission with it, exactly when the version goes.
func TestSubmissionTrimmedWithItsVersion(t *testing.T) {
	h := newHarness(t)
	h.fsm.Store().SetJobVersions(3)
	for i := range 5 {
		h.apply(registerWithSource(testJob("web", int32(100+i), 100), fmt.Sprintf("source %d", i)))
	}
	s := h.snap()
	for v := range uint64(5) {
		kept := s.JobVersion("default", "web", v) != nil
		require.Equal(t, v >= 2, kept, "version %d", v)
		sub := s.JobSubmission("default", "web", v)
		require.Equal(t, kept, sub != nil, "submission of version %d is kept exactly as its version", v)
		if kept {
			require.Equal(t, fmt.Sprintf("source %d", v), sub.Source)
		}
	}
}

// TestSubmissionPurgedWithItsJob: purging a job removes every version's
// submission, and a job registered again under the ID starts clean.
func TestSubmissionPurgedWithItsJob(t *testing.T) {
	h := newHarness(t)
	h.apply(registerWithSource(testJob("web", 100, 100), "a"))
	h.apply(registerWithSource(testJob("web", 200, 100), "b"))
	h.apply(registerWithSource(testJob("other", 200, 100), "c"))
	h.apply(deregister("web", true, nil))
	s := h.snap()
	require.Nil(t, s.JobSubmission("default", "web", 0))
	require.Nil(t, s.JobSubmission("default", "web", 1))
	require.NotNil(t, s.JobSubmission("default", "other", 0), "another job's source stays")

	h.apply(registerJob(testJob("web", 100, 100), nil))
	require.Nil(t, h.snap().JobSubmission("default", "web", 0), "the old version 0's source does not come back")
}

// TestSubmissionSnapshotRestore: the FSM snapshot keeps every stored
// submission, and the restored store still trims them with their versions.
func TestSubmissionSnapshotRestore(t *testing.T) {
	h := newHarness(t)
	for i := range 3 {
		h.apply(registerWithSource(testJob("web", int32(100+i), 100), fmt.Sprintf("source %d", i)))
	}
	h.apply(registerWithSource(testJob("api", 100, 100), "api source"))
	sink := persist(t, h.fsm)
	restored := NewFSM(NewStore(), nil)
	require.NoError(t, restored.Restore(io.NopCloser(bytes.NewReader(sink.Bytes()))))
	requireSameState(t, h.snap(), restored.Store().Snapshot())
	got := restored.Store().Snapshot().JobSubmission("default", "web", 2)
	require.NotNil(t, got)
	require.Equal(t, "source 2", got.Source)
	require.Equal(t, "api source", restored.Store().Snapshot().JobSubmission("default", "api", 0).GetSource())

	restored.Store().SetJobVersions(1)
	restored.Apply(rawLog(h.index+1, mustMarshal(t, registerWithSource(testJob("web", 999, 100), "source 3"))))
	s := restored.Store().Snapshot()
	require.Nil(t, s.JobSubmission("default", "web", 2), "trimmed after restore")
	require.Equal(t, "source 3", s.JobSubmission("default", "web", 3).GetSource())
}

// TestSubmissionSnapshotRecordsStaySmall: sources of up to 1 MB each are
// split over snapshot records of about snapshotChunkBytes, so that no
// record nears what Restore reads (a record of snapshotChunk such
// sources would be a gigabyte).
func TestSubmissionSnapshotRecordsStaySmall(t *testing.T) {
	h := newHarness(t)
	big := strings.Repeat("#", 1_000_000)
	const jobs = 40
	for i := range jobs {
		h.apply(registerWithSource(testJob(fmt.Sprintf("j%02d", i), 100, 100), big))
	}
	sink := persist(t, h.fsm)
	r := bufio.NewReader(bytes.NewReader(sink.Bytes()))
	records, subs := 0, 0
	for {
		rec := &messages.Snapshot{}
		err := protodelim.UnmarshalOptions{MaxSize: maxRecordBytes}.UnmarshalFrom(r, rec)
		if errors.Is(err, io.EOF) {
			break
		}
		require.NoError(t, err)
		require.Less(t, proto.Size(rec), snapshotChunkBytes+2_000_000, "record %d", records)
		records++
		subs += len(rec.Submissions)
	}
	require.Equal(t, jobs, subs)
	require.GreaterOrEqual(t, records, 3)

	restored := NewFSM(NewStore(), nil)
	require.NoError(t, restored.Restore(io.NopCloser(bytes.NewReader(sink.Bytes()))))
	require.Len(t, restored.Store().Snapshot().JobSubmission("default", "j39", 0).GetSource(), 1_000_000)
}
