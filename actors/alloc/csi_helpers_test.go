package alloc

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/asynkron/protoactor-go/actor"
	"github.com/stretchr/testify/require"
	"google.golang.org/protobuf/proto"

	"github.com/troupe-dev/troupe/actors"
	"github.com/troupe-dev/troupe/cluster/remote"
	"github.com/troupe-dev/troupe/messages"
	"github.com/troupe-dev/troupe/runtime/csi"
)

// callLog is one ordered log of the claimer's, the plugin's and the
// mounter's calls, so tests can check the order across them.
type callLog struct {
	mu      sync.Mutex
	entries []string
}

func (l *callLog) add(e string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.entries = append(l.entries, e)
}

func (l *callLog) all() []string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return slices.Clone(l.entries)
}

// about is the entries that mention s, in order.
func (l *callLog) about(s string) []string {
	var out []string
	for _, e := range l.all() {
		if strings.Contains(e, s) {
			out = append(out, e)
		}
	}
	return out
}

// fakeClaimer is the leader, as far as claims go: volumes it knows, and
// errors to return first.
type fakeClaimer struct {
	log *callLog
	// fake is read at each NodeDetached: how many NodeUnpublish calls
	// the plugin had seen by then.
	fake *csi.Fake

	mu          sync.Mutex
	known       map[string]bool // volume IDs; others answer not_found
	claimErrs   []error         // returned (in order) before answering
	claims      []*messages.VolumeClaimRequest
	detachErrs  []error
	detached    []*messages.VolumeNodeDetachedRequest
	unpubAtDone []int // fake.Calls(NodeUnpublish) at each NodeDetached
}

var _ VolumeClaimer = (*fakeClaimer)(nil)

// errCode is a claim error as the agent's Claimer returns it.
func errCode(code string) error {
	return &remote.RemoteError{Addr: "leader", Actor: "volumes", Code: code, Message: "injected " + code}
}

func (c *fakeClaimer) Claim(ctx context.Context, req *messages.VolumeClaimRequest) (*messages.VolumeClaimResponse, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.claims = append(c.claims, proto.Clone(req).(*messages.VolumeClaimRequest))
	c.log.add("Claim " + req.GetVolumeID())
	if len(c.claimErrs) > 0 {
		err := c.claimErrs[0]
		c.claimErrs = c.claimErrs[1:]
		var re *remote.RemoteError
		if errors.As(err, &re) && re.Code == "unavailable" {
			// the leader's answer, in the response rather than the error
			return &messages.VolumeClaimResponse{Error: &messages.Error{Code: re.Code, Message: re.Message}}, nil
		}
		return nil, err
	}
	if !c.known[req.GetVolumeID()] {
		return &messages.VolumeClaimResponse{Error: &messages.Error{Code: remote.CodeNotFound,
			Message: fmt.Sprintf("volume %q not found in namespace %q", req.GetVolumeID(), "default")}}, nil
	}
	claim := proto.Clone(req.GetClaim()).(*messages.CSIVolumeClaim)
	claim.State, claim.PublishContext = "taken", map[string]string{"device": "/dev/fake"}
	return &messages.VolumeClaimResponse{Claim: claim, Volume: &messages.CSIVolume{
		ID: req.GetVolumeID(), PluginID: "plug", ExternalID: "ext-" + req.GetVolumeID(),
		Secrets: map[string]string{"token": "s3cret"}, Context: map[string]string{"k": "v"}}}, nil
}

func (c *fakeClaimer) NodeDetached(ctx context.Context, req *messages.VolumeNodeDetachedRequest) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.log.add("NodeDetached " + req.GetVolumeID())
	if len(c.detachErrs) > 0 {
		err := c.detachErrs[0]
		c.detachErrs = c.detachErrs[1:]
		return err
	}
	c.detached = append(c.detached, proto.Clone(req).(*messages.VolumeNodeDetachedRequest))
	c.unpubAtDone = append(c.unpubAtDone, c.fake.Calls(csi.MethodNodeUnpublish))
	return nil
}

func (c *fakeClaimer) claimCount() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return len(c.claims)
}

func (c *fakeClaimer) claim(i int) *messages.VolumeClaimRequest {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.claims[i]
}

func (c *fakeClaimer) unpublishedAtDetach() []int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return slices.Clone(c.unpubAtDone)
}

func (c *fakeClaimer) detachedVolumes() []string {
	c.mu.Lock()
	defer c.mu.Unlock()
	var out []string
	for _, d := range c.detached {
		out = append(out, d.GetVolumeID())
	}
	slices.Sort(out)
	return out
}

// pluginClient is the node plugin as Dial returns it: the shared Fake,
// logged, and making the mounter see what it publishes (a real plugin
// mounts the target).
type pluginClient struct {
	csi.Client
	log     *callLog
	mounter *fakeMounter
}

func (p *pluginClient) NodeStage(ctx context.Context, req *csi.StageRequest) error {
	p.log.add("NodeStage " + req.VolumeID)
	return p.Client.NodeStage(ctx, req)
}

func (p *pluginClient) NodePublish(ctx context.Context, req *csi.NodePublishRequest) error {
	p.log.add("NodePublish " + req.VolumeID)
	err := p.Client.NodePublish(ctx, req)
	if err == nil {
		p.mounter.SetMounted(req.TargetPath, true)
	}
	return err
}

func (p *pluginClient) NodeUnpublish(ctx context.Context, volumeID, target string) error {
	p.log.add("NodeUnpublish " + volumeID)
	err := p.Client.NodeUnpublish(ctx, volumeID, target)
	if err == nil {
		p.mounter.SetMounted(target, false)
	}
	return err
}

func (p *pluginClient) NodeUnstage(ctx context.Context, volumeID, staging string) error {
	p.log.add("NodeUnstage " + volumeID)
	return p.Client.NodeUnstage(ctx, volumeID, staging)
}

// csiEnv is a client's CSI side for tests: the Fake plugin behind a
// node plugin lookup that tests can take away or move.
type csiEnv struct {
	log     *callLog
	plugin  *csi.Fake
	claimer *fakeClaimer
	mounter *fakeMounter
	usage   *Usage // what the usage actor starts with (attach)
	cfg     *CSIConfig
	root    *actor.RootContext // of the harness attached

	mu      sync.Mutex
	socket  string // "" : no healthy node plugin
	dials   []string
	dialErr atomic.Value // error
}

func newCSIEnv(t *testing.T) *csiEnv {
	log := &callLog{}
	e := &csiEnv{log: log, plugin: csi.NewFake(), mounter: newFakeMounter(), usage: newUsage(), socket: "/run/plug/csi.sock"}
	e.claimer = &fakeClaimer{log: log, fake: e.plugin, known: map[string]bool{}}
	e.mounter.OnOp(func(op string) {
		if !strings.HasPrefix(op, "Mounted ") {
			log.add(op)
		}
	})
	e.cfg = &CSIConfig{
		Claimer:    e.claimer,
		NodePlugin: e.nodePlugin,
		Dial:       e.dial,
		Root:       t.TempDir(),
		Mounter:    e.mounter,
		Retry:      actors.Retry{Initial: time.Second, Max: time.Minute, Multiplier: 2, Deadline: 24 * time.Hour},
		ClaimRetry: actors.Retry{Initial: time.Second, Max: 10 * time.Second, Multiplier: 2, Deadline: time.Hour},
	}
	return e
}

// attach starts the usage actor (the agent's client/csi-usage) in h's
// system with e.usage, and gives it to e's config.
func (e *csiEnv) attach(h *harness) {
	pid, err := h.sys.Root.SpawnNamed(h.sys.Props("csi-usage", NewUsageActor(e.usage, slog.New(slog.DiscardHandler))), "client/csi-usage")
	require.NoError(h.t, err)
	e.cfg.Usage, e.root = pid, h.sys.Root
}

// users asks the usage actor how many allocations use the volume staged
// at key.
func (e *csiEnv) users(key string) int {
	n, err := e.root.RequestFuture(e.cfg.Usage, &usageUsers{Key: key}, 5*time.Second).Result()
	if err != nil {
		panic(err)
	}
	return n.(int)
}

func (e *csiEnv) known(ids ...string) {
	e.claimer.mu.Lock()
	defer e.claimer.mu.Unlock()
	for _, id := range ids {
		e.claimer.known[id] = true
	}
}

func (e *csiEnv) setSocket(s string) {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.socket = s
}

func (e *csiEnv) nodePlugin(id string) (string, *messages.CSIInfo, bool) {
	e.mu.Lock()
	defer e.mu.Unlock()
	if id != "plug" || e.socket == "" {
		return "", nil, false
	}
	return e.socket, &messages.CSIInfo{PluginID: id, Healthy: true,
		NodeInfo: &messages.CSINodeInfo{ID: "ext-node-1", RequiresNodeStageVolume: true}}, true
}

func (e *csiEnv) dial(_ context.Context, socket string) (csi.Client, error) {
	e.mu.Lock()
	e.dials = append(e.dials, socket)
	e.mu.Unlock()
	if err, _ := e.dialErr.Load().(error); err != nil {
		return nil, err
	}
	return &pluginClient{Client: e.plugin, log: e.log, mounter: e.mounter}, nil
}

// csiHarness is a harness whose allocs get e's CSI config, and a postrun
// hook that counts its runs (the alloc actor is done when it ran).
func csiHarness(t *testing.T) (*harness, *csiEnv, *postrunCounter) {
	h := newHarness(t)
	e := newCSIEnv(t)
	pc := &postrunCounter{}
	h.csi, h.hooks = e.cfg, []Hook{pc}
	e.attach(h)
	return h, e, pc
}

type postrunCounter struct{ n atomic.Int32 }

func (p *postrunCounter) Name() string { return "postrun_counter" }

func (p *postrunCounter) Postrun(context.Context, *messages.Allocation) error {
	p.n.Add(1)
	return nil
}

// csiAlloc is an alloc whose task mounts each volume at /mnt/<name>.
func csiAlloc(id string, vols ...string) *messages.Allocation {
	a := testAlloc("service", map[string]any{}, nil)
	a.ID, a.NodeID = id, "node-1"
	g := a.Job.TaskGroups[0]
	g.Volumes = map[string]*messages.VolumeRequest{}
	for _, v := range vols {
		g.Volumes[v] = &messages.VolumeRequest{Name: v, Type: "csi", Source: v,
			AccessMode: csi.AccessModeMultiNodeMultiWriter, AttachmentMode: csi.AttachmentModeFilesystem}
		g.Tasks[0].VolumeMounts = append(g.Tasks[0].VolumeMounts, &messages.VolumeMount{Volume: v, Destination: "/mnt/" + v})
	}
	return a
}

const csiAllocID = "c0000000-0000-0000-0000-000000000001"

func (h *harness) stop(a *messages.Allocation) {
	stop := proto.Clone(a).(*messages.Allocation)
	stop.DesiredStatus = "stop"
	h.sys.Root.Send(allocPID(a), &messages.UpdateAlloc{Alloc: stop})
}

func allocPID(a *messages.Allocation) *actor.PID {
	return actor.NewPID("nonhost", "client/allocs/"+a.GetID())
}

// volumeState is a predicate on one volume's reported state.
func volumeState(name, state string) func(*messages.Allocation) bool {
	return func(a *messages.Allocation) bool { return a.GetVolumeStates()[name].GetState() == state }
}

// allVolumes is a predicate: every named volume is in state.
func allVolumes(state string, names ...string) func(*messages.Allocation) bool {
	return func(a *messages.Allocation) bool {
		for _, n := range names {
			if a.GetVolumeStates()[n].GetState() != state {
				return false
			}
		}
		return true
	}
}

// drive advances the clock by step each time a timer waits, until done.
func (h *harness) drive(step time.Duration, done func() bool) {
	h.t.Helper()
	for range 1000 {
		require.Eventually(h.t, func() bool { return done() || h.clock.Pending() > 0 }, 5*time.Second, time.Millisecond)
		if done() {
			return
		}
		h.clock.Advance(step)
	}
	h.t.Fatal("still not done after 1000 clock steps")
}

// waitPostrun waits until the postrun hooks ran n times in all.
func waitPostrun(t *testing.T, pc *postrunCounter, n int32) {
	t.Helper()
	require.Eventually(t, func() bool { return pc.n.Load() == n }, 5*time.Second, time.Millisecond)
}

func eventTypes(st *messages.AllocVolumeState) []string {
	var out []string
	for _, ev := range st.GetEvents() {
		out = append(out, ev.GetType())
	}
	return out
}
