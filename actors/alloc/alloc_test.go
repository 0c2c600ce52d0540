package alloc

import (
	"log/slog"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/asynkron/protoactor-go/actor"
	"github.com/stretchr/testify/require"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/known/structpb"

	"github.com/troupe-dev/troupe/actors"
	"github.com/troupe-dev/troupe/messages"
	"github.com/troupe-dev/troupe/runtime/clientstate"
	"github.com/troupe-dev/troupe/runtime/cni"
	"github.com/troupe-dev/troupe/runtime/device"
	"github.com/troupe-dev/troupe/runtime/driver"
)

// harness runs alloc actors under a parent that records their reports.
type harness struct {
	t      *testing.T
	sys    *actors.System
	fake   *driver.Fake
	clock  *actors.FakeClock
	db     *clientstate.DB
	root   string
	parent *actor.PID
	latest chan *messages.Allocation
	// csi, when set, is every spawned alloc's Spec.CSI; hooks its Hooks.
	csi   *CSIConfig
	hooks []Hook
	// net, netRetry and netAttempts are every spawned alloc's Spec.Network
	// and its teardown retry; drivers, when set, replace {"fake": fake}.
	net         cni.Networker
	netRetry    actors.Retry
	netAttempts int
	drivers     map[string]driver.Driver
	// devices is every spawned alloc's Spec.Devices.
	devices device.Plugin
	// readAlloc, when set, is every spawned alloc's state read.
	readAlloc func(id string) (*clientstate.StoredAlloc, error)
	// readHandle, when set, is every task's handle read.
	readHandle func(allocID, task string) ([]byte, error)
	// vars, when set, is every spawned alloc's Spec.Vars.
	vars VarSource
	// idents, when set, is every spawned alloc's Spec.Identities.
	idents IdentitySource
	close  func()
}

type spawnAlloc struct{ spec *Spec }

type parent struct {
	h *harness
}

func (p *parent) Receive(ctx actor.Context) {
	switch m := ctx.Message().(type) {
	case *spawnAlloc:
		props := p.h.sys.Props("alloc", New(m.spec), actor.WithSupervisor(actors.DefaultSupervision.Strategy()))
		_, err := ctx.SpawnNamed(props, "allocs/"+m.spec.Alloc.GetID())
		require.NoError(p.h.t, err)
	case *messages.AllocUpdated:
		p.h.latest <- m.GetAlloc()
	}
}

func newHarness(t *testing.T) *harness {
	t.Helper()
	return newHarnessAt(t, filepath.Join(t.TempDir(), "client.db"), t.TempDir(), driver.NewFake(),
		actors.NewFakeClock(time.Unix(1_700_000_000, 0)))
}

// newHarnessAt is a harness on the state file at dbPath (a restarted
// agent reopens the same file).
func newHarnessAt(t *testing.T, dbPath, root string, drv *driver.Fake, clock *actors.FakeClock) *harness {
	t.Helper()
	h := &harness{t: t, fake: drv, clock: clock, root: root, latest: make(chan *messages.Allocation, 10000)}
	logger := slog.New(slog.DiscardHandler)
	h.sys = actors.NewSystem(logger)
	db, err := clientstate.Open(dbPath, logger)
	require.NoError(t, err)
	h.db = db
	h.parent, err = h.sys.Root.SpawnNamed(h.sys.Props("node", func() actor.Actor { return &parent{h: h} }), "client")
	require.NoError(t, err)
	var once sync.Once
	h.close = func() {
		once.Do(func() {
			// Stop the actors (tasks keep running; their watchers end),
			// then the system: nothing of the test may leak (goleak in
			// TestMain).
			_ = h.sys.Root.StopFuture(h.parent).Wait()
			h.sys.Shutdown()
			_ = db.Close()
		})
	}
	t.Cleanup(h.close)
	return h
}

func (h *harness) spawn(a *messages.Allocation) {
	drivers := h.drivers
	if drivers == nil {
		drivers = map[string]driver.Driver{"fake": h.fake}
	}
	h.sys.Root.Send(h.parent, &spawnAlloc{spec: &Spec{Alloc: a, Drivers: drivers,
		DB: h.db, Clock: h.clock, AllocRoot: h.root, Registry: h.sys.Registry, Logger: slog.New(slog.DiscardHandler),
		CSI: h.csi, Hooks: h.hooks, Network: h.net, NetworkRetry: h.netRetry, NetworkAttempts: h.netAttempts,
		Devices: h.devices, readAlloc: h.readAlloc, readHandle: h.readHandle, Vars: h.vars,
		Identities: h.idents}})
}

// waitFor waits for a report that satisfies ok, returning it.
func (h *harness) waitFor(what string, ok func(*messages.Allocation) bool) *messages.Allocation {
	h.t.Helper()
	deadline := time.After(5 * time.Second)
	for {
		select {
		case a := <-h.latest:
			if ok(a) {
				return a
			}
		case <-deadline:
			h.t.Fatalf("timed out waiting for %s", what)
		}
	}
}

func status(s string) func(*messages.Allocation) bool {
	return func(a *messages.Allocation) bool { return a.GetClientStatus() == s }
}

func testAlloc(jobType string, config map[string]any, restart *messages.RestartPolicy) *messages.Allocation {
	cfg, _ := structpb.NewStruct(config)
	return &messages.Allocation{
		ID: "a1b2c3d4-0000-0000-0000-000000000001", JobID: "web", TaskGroup: "g", Name: "web.g[0]",
		DesiredStatus: "run", ClientStatus: "pending",
		Job: &messages.Job{ID: "web", Type: jobType, TaskGroups: []*messages.TaskGroup{{
			Name: "g", Count: 1,
			Tasks: []*messages.Task{{Name: "t", Driver: "fake", Config: cfg, RestartPolicy: restart,
				Resources: &messages.Resources{CPU: 100, MemoryMB: 64}}},
		}}},
	}
}

var taskID = "a1b2c3d4-0000-0000-0000-000000000001/t"

func TestAllocRunsAndStops(t *testing.T) {
	h := newHarness(t)
	a := testAlloc("service", map[string]any{}, nil)
	h.spawn(a)
	h.waitFor("running", status(statusRunning))
	require.True(t, h.fake.Running(taskID))
	cfg, _ := h.fake.Task(taskID)
	require.Equal(t, a.ID, cfg.Env["TROUPE_ALLOC_ID"])
	require.Equal(t, filepath.Join(h.root, a.ID, "alloc", "logs", "t.stdout"), cfg.StdoutPath)
	require.DirExists(t, filepath.Join(h.root, a.ID, "alloc"))

	stop := proto.Clone(a).(*messages.Allocation)
	stop.DesiredStatus = "stop"
	h.sys.Root.Send(actor.NewPID("nonhost", "client/allocs/"+a.ID), &messages.UpdateAlloc{Alloc: stop})
	done := h.waitFor("complete", status(statusComplete))
	require.Equal(t, 1, h.fake.Calls(driver.MethodStartTask))
	require.Equal(t, 1, h.fake.Calls(driver.MethodStopTask))
	require.Equal(t, taskDead, done.TaskStates["t"].State)
	require.False(t, done.TaskStates["t"].Failed)
}

func TestServiceTaskRestartsThenFails(t *testing.T) {
	h := newHarness(t)
	pol := &messages.RestartPolicy{Attempts: 1, Interval: int64(time.Hour), Delay: int64(10 * time.Second), Mode: "fail"}
	h.spawn(testAlloc("service", map[string]any{"exit_code": 1}, pol))
	h.waitFor("restart pending", func(a *messages.Allocation) bool { return a.TaskStates["t"].GetRestarts() == 1 })
	require.Equal(t, 1, h.fake.Calls(driver.MethodStartTask))
	require.Eventually(t, func() bool { return h.clock.Pending() == 1 }, 5*time.Second, time.Millisecond)
	h.clock.Advance(10 * time.Second)
	failed := h.waitFor("failed", status(statusFailed))
	require.Equal(t, 2, h.fake.Calls(driver.MethodStartTask))
	st := failed.TaskStates["t"]
	require.True(t, st.Failed)
	require.Equal(t, eventNotRestarting, st.Events[len(st.Events)-1].Type)
}

func TestBatchTaskCompletes(t *testing.T) {
	h := newHarness(t)
	h.spawn(testAlloc("batch", map[string]any{"exit_code": 0}, nil))
	done := h.waitFor("complete", status(statusComplete))
	require.Equal(t, 1, h.fake.Calls(driver.MethodStartTask))
	require.False(t, done.TaskStates["t"].Failed)
}

func TestCrashRestartsActorAndReattaches(t *testing.T) {
	h := newHarness(t)
	a := testAlloc("service", map[string]any{}, nil)
	h.spawn(a)
	h.waitFor("running", status(statusRunning))
	pid := actor.NewPID("nonhost", "client/allocs/"+a.ID)
	h.sys.Root.Send(pid, &crash{})
	require.Eventually(t, func() bool { return h.fake.Calls(driver.MethodRecoverTask) == 1 }, 5*time.Second, time.Millisecond)
	h.waitFor("running again", status(statusRunning))
	require.Equal(t, 1, h.fake.Calls(driver.MethodStartTask), "the task must not start twice")
	require.True(t, h.fake.Running(taskID))
	var info *actors.Info
	for _, in := range h.sys.Tree() {
		if in.Path == "client/allocs/"+a.ID {
			info = in
		}
	}
	require.NotNil(t, info)
	require.Equal(t, 1, info.Restarts)
	require.Equal(t, "running", info.Phase)
	require.Equal(t, []string{"client/allocs/" + a.ID + "/tasks/t"}, info.Children)
}

func TestUnknownDriverFailsAlloc(t *testing.T) {
	h := newHarness(t)
	a := testAlloc("service", map[string]any{}, nil)
	a.Job.TaskGroups[0].Tasks[0].Driver = "nope"
	h.spawn(a)
	failed := h.waitFor("failed", status(statusFailed))
	require.Contains(t, failed.TaskStates["t"].Events[0].DisplayMessage, `unknown driver: "nope"`)
	require.Zero(t, h.fake.Calls(driver.MethodStartTask))
}
