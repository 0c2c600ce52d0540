package alloc

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/troupe-dev/troupe/actors"
	"github.com/troupe-dev/troupe/messages"
	"github.com/troupe-dev/troupe/runtime/clientstate"
	"github.com/troupe-dev/troupe/runtime/cni"
	"github.com/troupe-dev/troupe/runtime/driver"
)

const netAllocID = "b0000000-0000-0000-0000-000000000001"

// loggedNet is the cni Fake writing its calls into a shared call log;
// Teardown also logs whether a task still ran then.
type loggedNet struct {
	*cni.Fake
	log     *callLog
	drv     *driver.Fake
	running string // a task ID Teardown looks at
}

func (n *loggedNet) Setup(ctx context.Context, req cni.SetupRequest) (*cni.Result, error) {
	n.log.add("Network Setup")
	return n.Fake.Setup(ctx, req)
}

func (n *loggedNet) Restore(ctx context.Context, id string, raw []byte, req cni.SetupRequest) (*cni.Result, error) {
	n.log.add("Network Restore")
	return n.Fake.Restore(ctx, id, raw, req)
}

func (n *loggedNet) Teardown(ctx context.Context, id string, raw []byte, req cni.SetupRequest) error {
	n.log.add(fmt.Sprintf("Network Teardown (task running: %v)", n.drv.Running(n.running)))
	return n.Fake.Teardown(ctx, id, raw, req)
}

// loggedDriver is the driver Fake writing starts and stops into the log.
type loggedDriver struct {
	*driver.Fake
	log *callLog
}

func (d *loggedDriver) StartTask(ctx context.Context, cfg *driver.TaskConfig) (*driver.TaskHandle, error) {
	d.log.add("StartTask " + cfg.TaskName)
	return d.Fake.StartTask(ctx, cfg)
}

func (d *loggedDriver) StopTask(ctx context.Context, id string, timeout time.Duration, sig string) error {
	d.log.add("StopTask " + id)
	return d.Fake.StopTask(ctx, id, timeout, sig)
}

// netHarness is a harness whose allocs get a cni Fake with a fast,
// clock-driven teardown retry.
func netHarness(t *testing.T) (*harness, *cni.Fake) {
	h := newHarness(t)
	f := cni.NewFake()
	h.net = f
	h.netRetry = actors.Retry{Initial: time.Second, Max: 4 * time.Second, Multiplier: 2, Deadline: time.Hour}
	return h, f
}

// bridgeAlloc is an alloc of a bridge-mode group with port "http" (host
// port 8080, task port 80) reserved and "metrics" dynamic, as the
// scheduler allocates them (Value filled).
func bridgeAlloc(id string) *messages.Allocation {
	a := testAlloc("service", map[string]any{}, nil)
	a.ID, a.NodeID = id, "node-1"
	a.Job.TaskGroups[0].Networks = []*messages.NetworkResource{{Mode: networkModeBridge,
		ReservedPorts: []*messages.Port{{Label: "http", Value: 8080, To: 80}},
		DynamicPorts:  []*messages.Port{{Label: "metrics"}}}}
	a.AllocatedResources = &messages.AllocatedResources{Shared: &messages.AllocatedSharedResources{
		Networks: []*messages.NetworkResource{{Mode: networkModeBridge, IP: "192.168.1.10",
			ReservedPorts: []*messages.Port{{Label: "http", Value: 8080, To: 80}},
			DynamicPorts:  []*messages.Port{{Label: "metrics", Value: 25000}}}}}}
	return a
}

// networkRecordOf reads the alloc's network record from the state file.
func networkRecordOf(t *testing.T, h *harness, id string) *clientstate.AllocNetwork {
	t.Helper()
	rec, err := h.db.Network(id)
	require.NoError(t, err)
	return rec
}

// phaseOf is the alloc actor's phase in the actor tree.
func phaseOf(h *harness, id string) string {
	for _, in := range h.sys.Tree() {
		if in.Path == "client/allocs/"+id {
			return in.Phase
		}
	}
	return ""
}

// waitTerminal waits until the alloc actor let go of everything.
func waitTerminal(t *testing.T, h *harness, id string) {
	t.Helper()
	require.Eventually(t, func() bool { return phaseOf(h, id) == phaseTerminal.String() }, 5*time.Second, time.Millisecond)
}

func hasNetwork(addr string) func(*messages.Allocation) bool {
	return func(a *messages.Allocation) bool { return a.GetNetworkStatus().GetAddress() == addr }
}

func taskEvents(st *messages.TaskState) []string {
	var out []string
	for _, ev := range st.GetEvents() {
		out = append(out, ev.GetType())
	}
	return out
}
