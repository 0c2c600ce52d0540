package state

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/hashicorp/raft"
	"github.com/stretchr/testify/require"
	"google.golang.org/protobuf/proto"

	"github.com/troupe-dev/troupe/messages"
)

func nextBatches(t *testing.T, sub *EventSubscription) []EventBatch {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	b, err := sub.Next(ctx)
	require.NoError(t, err)
	return b
}

func TestEventsOfJobRunAndPlan(t *testing.T) {
	h := newHarness(t)
	h.apply(registerNode(testNode("n1", 1000, 1000)))
	h.apply(registerJob(testJob("web", 10, 10), testEval("e1", "web", "pending")))
	h.apply(plan(&messages.ApplyPlan{EvalID: "e1", Place: []*messages.Allocation{testAlloc("a1", "web", "n1", "e1", 10, 10)}}))

	sub := h.fsm.store.SubscribeEvents(0, nil)
	var got []string
	for len(got) < 5 {
		for _, b := range nextBatches(t, sub) {
			for _, e := range b.Events {
				require.Equal(t, b.Index, e.Index)
				got = append(got, fmt.Sprintf("%d %s %s %s", e.Index, e.Topic, e.Type, e.Key))
			}
		}
	}
	require.Equal(t, []string{
		"1 Node NodeRegistration n1",
		"2 Job JobRegistered web",
		"2 Evaluation JobRegistered e1",
		"3 Allocation PlanResult a1",
		"3 Job PlanResult web", // its status moved to running
	}, got)
}

func TestEventsFromIndexNoGapNoDuplicate(t *testing.T) {
	h := newHarness(t)
	for i := range 10 {
		h.apply(registerJob(testJob(fmt.Sprintf("j%d", i), 10, 10), testEval(fmt.Sprintf("e%d", i), fmt.Sprintf("j%d", i), "pending")))
	}
	jobsOnly := func(e *StreamEvent) bool { return e.Topic == TopicJob }
	sub := h.fsm.store.SubscribeEvents(4, jobsOnly)
	first := nextBatches(t, sub)
	require.Len(t, first, 7)
	require.Equal(t, uint64(4), first[0].Index)
	last := first[len(first)-1].Index
	// A reconnect from the last index seen + 1 gets what came after.
	h.apply(registerJob(testJob("j10", 10, 10), nil))
	again := nextBatches(t, h.fsm.store.SubscribeEvents(last+1, jobsOnly))
	require.Len(t, again, 1)
	require.Equal(t, last+1, again[0].Index)
	require.Equal(t, "j10", again[0].Events[0].Key)
}

func TestEventsLostWhenOverwritten(t *testing.T) {
	h := newHarness(t)
	h.fsm.store.SetEventBufferSize(4)
	for i := range 10 {
		h.apply(registerJob(testJob(fmt.Sprintf("j%d", i), 10, 10), nil))
	}
	_, err := h.fsm.store.SubscribeEvents(2, nil).Next(context.Background())
	require.ErrorIs(t, err, ErrEventsLost)
	b := nextBatches(t, h.fsm.store.SubscribeEvents(7, nil))
	require.Len(t, b, 4)
	b = nextBatches(t, h.fsm.store.SubscribeEvents(0, nil))
	require.Equal(t, uint64(7), b[0].Index, "index 0 reads from the oldest held")
}

func TestEventsJobDeregisterPurgeCarriesLastJob(t *testing.T) {
	h := newHarness(t)
	h.apply(registerJob(testJob("web", 10, 10), nil))
	h.apply(&messages.Command{Cmd: &messages.Command_DeregisterJob{DeregisterJob: &messages.DeregisterJob{Namespace: "default", JobID: "web", Purge: true}}})
	b := nextBatches(t, h.fsm.store.SubscribeEvents(1, func(e *StreamEvent) bool { return e.Type == "JobDeregistered" }))
	require.Len(t, b, 1)
	require.True(t, b[0].Events[0].Deleted)
	require.Equal(t, "web", b[0].Events[0].Payload.(*messages.Job).ID)
}

// BenchmarkApplyPlanEvents applies 100-allocation plans with no reader
// and with a reader that never reads (it is cut off, never waited for).
func BenchmarkApplyPlanEvents(b *testing.B) {
	for _, slow := range []bool{false, true} {
		b.Run(fmt.Sprintf("slowReader=%v", slow), func(b *testing.B) {
			h := seedBench(b, 1000, 0)
			if slow {
				sub := h.fsm.store.SubscribeEvents(1, nil)
				ctx, cancel := context.WithCancel(context.Background())
				defer cancel()
				go func() { // reads one batch, then stalls
					_, _ = sub.Next(ctx)
					<-ctx.Done()
				}()
			}
			logs := make([]*raft.Log, b.N)
			for i := range logs {
				data, err := proto.Marshal(plan(benchPlan(fmt.Sprintf("b%06d", i), 1000, 100)))
				require.NoError(b, err)
				h.index++
				logs[i] = &raft.Log{Index: h.index, Type: raft.LogCommand, Data: data}
			}
			b.ReportAllocs()
			b.ResetTimer()
			for i := range logs {
				h.fsm.Apply(logs[i])
			}
			b.ReportMetric(float64(b.N*100)/b.Elapsed().Seconds(), "allocs/s")
		})
	}
}

// TestEventsBufferObjectBudget: big plans push the oldest entries out
// once the allocations they hold the state of pass the budget.
func TestEventsBufferObjectBudget(t *testing.T) {
	h := newHarness(t)
	h.fsm.store.events.budget = 25
	h.apply(registerNode(testNode("n1", 1<<30, 1<<30)))
	h.apply(registerJob(testJob("web", 1, 1), nil))
	for i := range 3 {
		p := &messages.ApplyPlan{EvalID: fmt.Sprintf("e%d", i)}
		for j := range 10 {
			p.Place = append(p.Place, testAlloc(fmt.Sprintf("a%d-%d", i, j), "web", "n1", p.EvalID, 1, 1))
		}
		h.apply(plan(p)) // 11 objects each
	}
	_, err := h.fsm.store.SubscribeEvents(3, nil).Next(context.Background())
	require.ErrorIs(t, err, ErrEventsLost, "the first plan (index 3) went to make room")
	require.Equal(t, uint64(4), h.fsm.store.events.oldestIndex())
	require.Equal(t, 22, h.fsm.store.events.cost)
}

// TestEventsNoneWhereNomadHasNone: as in Nomad, marking a job version
// stable and setting the scheduler configuration emit no event (Nomad has
// no topic for them, nor for variables), so a stream reads past them.
func TestEventsNoneWhereNomadHasNone(t *testing.T) {
	h := newHarness(t)
	h.apply(registerJob(testJob("web", 10, 10), testEval("e1", "web", "pending")))
	h.apply(&messages.Command{Cmd: &messages.Command_SetJobStable{SetJobStable: &messages.SetJobStable{
		Namespace: "default", JobID: "web", Version: 0, Stable: true}}})
	h.apply(&messages.Command{Cmd: &messages.Command_SetSchedulerConfig{SetSchedulerConfig: &messages.SetSchedulerConfig{
		Config: &messages.SchedulerConfiguration{SchedulerAlgorithm: "spread"}}}})
	require.True(t, h.fsm.store.Snapshot().JobByID("default", "web").GetStable())
	h.apply(registerJob(testJob("end", 10, 10), testEval("e2", "end", "pending")))

	sub := h.fsm.store.SubscribeEvents(0, nil)
	var indexes []uint64
	for len(indexes) < 2 {
		for _, b := range nextBatches(t, sub) {
			indexes = append(indexes, b.Index)
		}
	}
	require.Equal(t, []uint64{1, 4}, indexes)
}

// TestEventsLiveReaderFallsBehind: a reader that is streaming stalls
// between two reads while the FSM applies more than the buffer holds;
// every apply returns without waiting for it, and its next read is the
// error naming the first index it lost (then the stream is over for it).
func TestEventsLiveReaderFallsBehind(t *testing.T) {
	h := newHarness(t)
	h.fsm.store.SetEventBufferSize(4)
	sub := h.fsm.store.SubscribeEvents(0, nil)
	read := make(chan []EventBatch)
	resume := make(chan struct{})
	failed := make(chan error, 1)
	go func() { // the live reader: one read, a stall, then reads again
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		b, err := sub.Next(ctx)
		if err != nil {
			failed <- err
			return
		}
		read <- b
		<-resume
		_, err = sub.Next(ctx)
		failed <- err
	}()
	h.apply(registerJob(testJob("j0", 10, 10), nil))
	select {
	case b := <-read:
		require.Equal(t, uint64(1), b[0].Index, "the reader streams what is applied")
	case err := <-failed:
		require.NoError(t, err)
	case <-time.After(5 * time.Second):
		t.Fatal("the reader got nothing")
	}
	// The reader stalls: ten applies overwrite what it has not read.
	for i := range 10 {
		h.apply(registerJob(testJob(fmt.Sprintf("j%d", i+1), 10, 10), nil))
	}
	require.Equal(t, uint64(8), h.fsm.store.events.oldestIndex())
	close(resume)
	select {
	case err := <-failed:
		require.ErrorIs(t, err, ErrEventsLost)
		require.EqualError(t, err, "state: events lost: events from index 2 are no longer held (oldest held: 8)")
	case <-time.After(5 * time.Second):
		t.Fatal("the stalled reader was never told it fell behind")
	}
}
