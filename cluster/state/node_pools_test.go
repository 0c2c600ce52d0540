package state

import (
	"bytes"
	"io"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
	"google.golang.org/protobuf/encoding/protodelim"
	"google.golang.org/protobuf/proto"

	"github.com/troupe-dev/troupe/messages"
)

func upsertPools(pools ...*messages.NodePool) *messages.Command {
	return &messages.Command{Cmd: &messages.Command_UpsertNodePools{UpsertNodePools: &messages.UpsertNodePools{Pools: pools}}}
}

func deletePools(names ...string) *messages.Command {
	return &messages.Command{Cmd: &messages.Command_DeleteNodePools{DeleteNodePools: &messages.DeleteNodePools{Names: names}}}
}

func poolNames(pools []*messages.NodePool) []string {
	out := make([]string, 0, len(pools))
	for _, p := range pools {
		out = append(out, p.Name)
	}
	return out
}

// requireRefused checks that the FSM answered res, an error matching
// want that says every one of texts, and changed nothing since before.
func requireRefused(t *testing.T, h *harness, before *Snap, res any, want error, texts ...string) {
	t.Helper()
	err, _ := res.(error)
	require.ErrorIs(t, err, want)
	for _, text := range texts {
		require.ErrorContains(t, err, text)
	}
	requireUnchanged(t, before, h.snap())
}

// requireUnchanged checks that a refused command left the pools, nodes,
// jobs and every table index as they were.
func requireUnchanged(t *testing.T, before, after *Snap) {
	t.Helper()
	require.Equal(t, before.Index(), after.Index(), "no table index moved")
	require.Equal(t, msgs(before.NodePools()), msgs(after.NodePools()))
	require.Equal(t, msgs(before.Nodes()), msgs(after.Nodes()))
	require.Equal(t, msgs(before.Jobs()), msgs(after.Jobs()))
}

func TestStoreStartsWithBuiltInNodePools(t *testing.T) {
	snap := NewStore().Snapshot()
	require.Equal(t, []string{"all", "default"}, poolNames(snap.NodePools()))
	for _, p := range snap.NodePools() {
		require.NotEmpty(t, p.Description)
		require.Equal(t, uint64(1), p.CreateIndex)
	}
}

func TestUpsertNodePools(t *testing.T) {
	long := strings.Repeat("d", maxNodePoolDescription+1)
	tests := []struct {
		name    string
		pools   []*messages.NodePool
		wantErr error
		errText string
		want    []string // pool names after
	}{
		{name: "create", pools: []*messages.NodePool{{Name: "gpu", Description: "GPUs", Meta: map[string]string{"k": "v"}}},
			want: []string{"all", "default", "dev", "gpu"}},
		{name: "update keeps CreateIndex", pools: []*messages.NodePool{{Name: "dev", Description: "changed"}},
			want: []string{"all", "default", "dev"}},
		{name: "several", pools: []*messages.NodePool{{Name: "a_1"}, {Name: "B-2"}},
			want: []string{"B-2", "a_1", "all", "default", "dev"}},
		{name: "default is built in", pools: []*messages.NodePool{{Name: "default", Description: "x"}},
			wantErr: ErrNodePoolBuiltIn, errText: `modifying node pool "default" is not allowed`},
		{name: "all is built in", pools: []*messages.NodePool{{Name: "all"}},
			wantErr: ErrNodePoolBuiltIn, errText: `modifying node pool "all" is not allowed`},
		{name: "bad name", pools: []*messages.NodePool{{Name: "no spaces"}},
			wantErr: ErrInvalidNodePool, errText: `invalid name "no spaces"`},
		{name: "empty name", pools: []*messages.NodePool{{Name: ""}}, wantErr: ErrInvalidNodePool, errText: `invalid name ""`},
		{name: "name too long", pools: []*messages.NodePool{{Name: strings.Repeat("n", 129)}}, wantErr: ErrInvalidNodePool},
		{name: "description too long", pools: []*messages.NodePool{{Name: "x", Description: long}},
			wantErr: ErrInvalidNodePool, errText: "description longer than 256"},
		{name: "scheduler configuration", pools: []*messages.NodePool{{Name: "x",
			SchedulerConfiguration: &messages.NodePoolSchedulerConfiguration{SchedulerAlgorithm: "spread"}}},
			wantErr: ErrInvalidNodePool, errText: "SchedulerConfiguration is not supported"},
		{name: "none", wantErr: ErrInvalidNodePool, errText: "must specify at least one node pool"},
		{name: "one bad stores none", pools: []*messages.NodePool{{Name: "ok"}, {Name: "bad/name"}},
			wantErr: ErrInvalidNodePool, errText: `"bad/name"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h := newHarness(t)
			require.Nil(t, h.apply(upsertPools(&messages.NodePool{Name: "dev", Description: "first"})))
			created := h.snap().NodePoolByName("dev").CreateIndex
			before := h.snap()
			res := h.apply(upsertPools(tt.pools...))
			if tt.wantErr != nil {
				requireRefused(t, h, before, res, tt.wantErr, tt.errText)
				return
			}
			require.Nil(t, res)
			snap := h.snap()
			require.Equal(t, tt.want, poolNames(snap.NodePools()))
			require.Equal(t, h.index, snap.Index(TableNodePools))
			for _, in := range tt.pools {
				got := snap.NodePoolByName(in.Name)
				require.Equal(t, in.Description, got.Description)
				require.Equal(t, in.Meta, got.Meta)
				require.Equal(t, h.index, got.ModifyIndex)
			}
			require.Equal(t, created, snap.NodePoolByName("dev").CreateIndex)
		})
	}
}

// poolsInUse is a store with pools "empty", "nodes" (one node), "live"
// (a pending job), "dead" (a stopped job) and "gone" (a purged job).
func poolsInUse(t *testing.T) *harness {
	h := newHarness(t)
	h.apply(upsertPools(&messages.NodePool{Name: "empty"}, &messages.NodePool{Name: "nodes"},
		&messages.NodePool{Name: "live"}, &messages.NodePool{Name: "dead"}, &messages.NodePool{Name: "gone"}))
	n := testNode("n1", 1000, 1000)
	n.NodePool = "nodes"
	h.apply(registerNode(n))
	for _, pool := range []string{"live", "dead", "gone"} {
		j := testJob("job-"+pool, 100, 100)
		j.NodePool = pool
		h.apply(registerJob(j, testEval("e-"+pool, j.ID, messages.EvalStatusPending)))
	}
	h.apply(deregister("job-dead", false, nil))
	h.apply(deregister("job-gone", true, nil))
	require.Equal(t, messages.JobStatusDead, h.snap().JobByID("default", "job-dead").Status)
	return h
}

func TestDeleteNodePools(t *testing.T) {
	tests := []struct {
		name    string
		names   []string
		wantErr error
		errText []string
	}{
		{name: "empty pool", names: []string{"empty"}},
		{name: "dead and purged jobs do not hold a pool", names: []string{"dead", "gone"}},
		{name: "unknown", names: []string{"nope"}, wantErr: ErrNodePoolNotFound, errText: []string{`node pool "nope" not found`}},
		{name: "default", names: []string{"default"}, wantErr: ErrNodePoolBuiltIn,
			errText: []string{`deleting node pool "default" is not allowed`}},
		{name: "all", names: []string{"all"}, wantErr: ErrNodePoolBuiltIn, errText: []string{`deleting node pool "all" is not allowed`}},
		{name: "has a node", names: []string{"nodes"}, wantErr: ErrNodePoolInUse, errText: []string{`node pool "nodes" has 1 node`}},
		{name: "has a live job", names: []string{"live"}, wantErr: ErrNodePoolInUse,
			errText: []string{`node pool "live" has non-terminal jobs: default/job-live`}},
		{name: "every problem is named, nothing deleted", names: []string{"empty", "nodes", "live"}, wantErr: ErrNodePoolInUse,
			errText: []string{`"nodes" has 1 node`, `"live" has non-terminal jobs`}},
		{name: "no names", wantErr: ErrInvalidNodePool, errText: []string{"must specify at least one node pool to delete"}},
		{name: "empty name", names: []string{""}, wantErr: ErrInvalidNodePool, errText: []string{"node pool name is empty"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h := poolsInUse(t)
			before := h.snap()
			res := h.apply(deletePools(tt.names...))
			if tt.wantErr != nil {
				requireRefused(t, h, before, res, tt.wantErr, tt.errText...)
				return
			}
			require.Nil(t, res)
			for _, name := range tt.names {
				require.Nil(t, h.snap().NodePoolByName(name))
			}
			require.Len(t, h.snap().NodePools(), len(before.NodePools())-len(tt.names))
			require.Equal(t, h.index, h.snap().Index(TableNodePools))
		})
	}
}

func TestRegisterNodeJoinsPool(t *testing.T) {
	tests := []struct {
		name     string
		pool     string
		wantPool string
		created  bool
		errText  string
	}{
		{name: "none is default", pool: "", wantPool: "default"},
		{name: "existing", pool: "dev", wantPool: "dev"},
		{name: "unknown is created", pool: "gpu", wantPool: "gpu", created: true},
		{name: "all is for jobs", pool: "all", errText: `cannot register in node pool "all"`},
		{name: "bad name", pool: "a/b", errText: `invalid name "a/b"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h, before := withDevPool(t)
			n := testNode("n1", 1000, 1000)
			n.NodePool = tt.pool
			res := h.apply(registerNode(n))
			if tt.errText != "" {
				requireRefused(t, h, before, res, ErrInvalidNodePool, tt.errText)
				return
			}
			require.Nil(t, res)
			snap := h.snap()
			require.Equal(t, tt.wantPool, snap.NodeByID("n1").NodePool)
			require.Equal(t, []string{"n1"}, nodeIDs(snap.NodesByPool(tt.wantPool)))
			require.Equal(t, []string{"n1"}, nodeIDs(snap.NodesByPool("all")))
			p := snap.NodePoolByName(tt.wantPool)
			require.NotNil(t, p)
			require.Equal(t, tt.created, p.CreateIndex == h.index, "created by this registration")
		})
	}
}

// withDevPool is a harness holding pool "dev", and its state.
func withDevPool(t *testing.T) (*harness, *Snap) {
	h := newHarness(t)
	require.Nil(t, h.apply(upsertPools(&messages.NodePool{Name: "dev"})))
	return h, h.snap()
}

func nodeIDs(nodes []*messages.Node) []string {
	out := make([]string, 0, len(nodes))
	for _, n := range nodes {
		out = append(out, n.ID)
	}
	return out
}

func TestRegisterJobNeedsItsPool(t *testing.T) {
	tests := []struct {
		name, pool, wantPool, errText string
	}{
		{name: "none is default", pool: "", wantPool: "default"},
		{name: "existing", pool: "dev", wantPool: "dev"},
		{name: "all", pool: "all", wantPool: "all"},
		{name: "unknown", pool: "nope", errText: `job "web" is in nonexistent node pool "nope"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h, before := withDevPool(t)
			j := testJob("web", 100, 100)
			j.NodePool = tt.pool
			res := h.apply(registerJob(j, testEval("e1", "web", messages.EvalStatusPending)))
			if tt.errText != "" {
				requireRefused(t, h, before, res, ErrInvalidNodePool, tt.errText)
				require.Nil(t, h.snap().EvalByID("e1"), "no evaluation either")
				return
			}
			require.IsType(t, &RegisterJobResult{}, res)
			require.Equal(t, tt.wantPool, h.snap().JobByID("default", "web").NodePool)
			require.Len(t, h.snap().JobsByPool(tt.wantPool), 1)
		})
	}
}

func TestNodePoolsSnapshotRoundTrip(t *testing.T) {
	h := newHarness(t)
	h.apply(upsertPools(&messages.NodePool{Name: "dev", Description: "d", Meta: map[string]string{"owner": "sre"}}))
	n := testNode("n1", 1000, 1000)
	n.NodePool = "gpu" // created by the registration
	h.apply(registerNode(n))
	restored := NewFSM(NewStore(), nil)
	require.NoError(t, restored.Restore(io.NopCloser(bytes.NewReader(persist(t, h.fsm).Bytes()))))
	got := restored.Store().Snapshot()
	requireSameState(t, h.snap(), got)
	require.Equal(t, []string{"all", "default", "dev", "gpu"}, poolNames(got.NodePools()))
	for _, p := range h.snap().NodePools() {
		require.True(t, proto.Equal(p, got.NodePoolByName(p.Name)), "pool %s", p.Name)
	}
	require.Equal(t, []string{"n1"}, nodeIDs(got.NodesByPool("gpu")))
	require.Equal(t, h.snap().Index(TableNodePools), got.Index(TableNodePools))
}

func TestRestoreWithoutNodePoolsKeepsBuiltIns(t *testing.T) {
	// A snapshot written before node pools existed has no NodePools.
	var buf bytes.Buffer
	rec := &messages.Snapshot{Index: 5, Nodes: []*messages.Node{testNode("n1", 1, 1)},
		Jobs: []*messages.Job{testJob("web", 1, 1)}}
	_, err := protodelim.MarshalTo(&buf, rec)
	require.NoError(t, err)
	f := NewFSM(NewStore(), nil)
	require.NoError(t, f.Restore(io.NopCloser(&buf)))
	snap := f.Store().Snapshot()
	require.Equal(t, []string{"all", "default"}, poolNames(snap.NodePools()))
	// Their empty pools read as "default".
	require.Equal(t, []string{"n1"}, nodeIDs(snap.NodesByPool("default")))
	require.Len(t, snap.JobsByPool("default"), 1)
	require.ErrorIs(t, CheckDeleteNodePools(snap, []string{"default"}), ErrNodePoolBuiltIn)
}
