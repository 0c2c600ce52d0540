package alloc

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"path/filepath"
	"slices"
	"time"

	"google.golang.org/grpc/codes"

	"github.com/troupe-dev/troupe/actors"
	"github.com/troupe-dev/troupe/cluster/state"
	"github.com/troupe-dev/troupe/messages"
	"github.com/troupe-dev/troupe/runtime/clientstate"
	"github.com/troupe-dev/troupe/runtime/csi"
	"github.com/troupe-dev/troupe/runtime/safepath"
)

// setupError is a failed volume setup; retry says whether trying again
// later may help (the allocation fails when it does not, or when the
// tries are used up).
type setupError struct {
	err   error
	retry bool
}

func (e *setupError) Error() string { return e.err.Error() }
func (e *setupError) Unwrap() error { return e.err }

func retryable(err error) error { return &setupError{err: err, retry: true} }
func fatal(err error) error     { return &setupError{err: err} }

// volumeSetup claims, stages, publishes and binds an allocation's csi
// volumes, one after the other. It runs in a worker (it blocks); it writes
// each volume record before the step that the record guards, and reports
// every change through progress. Running it again continues where it
// stopped: claims and CSI node calls are idempotent, and a volume whose
// target is still mounted is kept as it is.
type volumeSetup struct {
	cfg      *CSIConfig // nil: the client has no CSI support
	db       *clientstate.DB
	alloc    *messages.Allocation
	root     string // the alloc root (task dirs)
	clock    actors.Clock
	usage    *usageClient // turns on staged volumes
	progress func(*clientstate.VolumeMount)
	ctx      context.Context // set by run; once cancelled nothing more is written
}

// run sets up every csi volume of the group, in name order.
func (s *volumeSetup) run(ctx context.Context) error {
	s.ctx = ctx
	reqs := csiVolumes(s.alloc)
	if len(reqs) == 0 {
		return nil
	}
	if s.cfg == nil {
		names := slices.Sorted(maps.Keys(reqs))
		return fatal(fmt.Errorf("%w: volume %q", errNoCSI, names[0]))
	}
	recs, err := s.db.VolumeMounts(s.alloc.GetID())
	if err != nil {
		return fatal(err)
	}
	for _, name := range slices.Sorted(maps.Keys(reqs)) {
		if err := ctx.Err(); err != nil {
			return retryable(err)
		}
		if err := s.volume(ctx, name, reqs[name], recs[name]); err != nil {
			return err
		}
	}
	return nil
}

func (s *volumeSetup) volume(ctx context.Context, name string, req *messages.VolumeRequest, rec *clientstate.VolumeMount) error {
	if req.GetSource() == "" {
		return fatal(fmt.Errorf("%w: volume %q has no source", errVolumeSetup, name))
	}
	if rec == nil || !volumeActive(rec.State.GetState()) {
		rec = &clientstate.VolumeMount{Name: name, VolumeID: claimSource(s.alloc, req), ReadOnly: req.GetReadOnly(),
			State: &messages.AllocVolumeState{VolumeID: claimSource(s.alloc, req), State: volumeClaiming}}
	}
	if rec.State.GetState() == volumeMounted && rec.Published {
		if ok, err := s.cfg.Mounter.Mounted(rec.TargetPath); err == nil && ok {
			return s.bindAll(rec) // still mounted (an agent restart): keep it
		}
		if err := s.clean(rec); err != nil {
			return err
		}
	}
	resp, err := s.claim(ctx, rec, req)
	if err != nil {
		return err
	}
	return s.mount(ctx, rec, req, resp)
}

// clean drops what is left of a mount that is gone (a host reboot): the
// task binds and the stale target.
func (s *volumeSetup) clean(rec *clientstate.VolumeMount) error {
	addVolumeEvent(rec.State, eventVolumeRemounting, "the volume is not mounted any more; mounting it again", s.clock.Now())
	rec.State.State = volumeClaiming
	for _, p := range append(slices.Clone(rec.Binds), rec.TargetPath) {
		if err := s.cfg.Mounter.Unmount(p); err != nil {
			return fatal(volumeErr(rec, "clean "+p, err))
		}
	}
	return s.persist(rec)
}

func (s *volumeSetup) claim(ctx context.Context, rec *clientstate.VolumeMount, req *messages.VolumeRequest) (*messages.VolumeClaimResponse, error) {
	rec.ClaimSent = true
	if err := s.persist(rec); err != nil {
		return nil, err
	}
	claim := state.NewClaim(s.alloc.GetID(), s.alloc.GetNodeID(), rec.ExternalNodeID, req)
	cctx, cancel := context.WithTimeout(ctx, s.cfg.CallTimeout)
	defer cancel()
	resp, err := s.cfg.Claimer.Claim(cctx, &messages.VolumeClaimRequest{VolumeID: rec.VolumeID, Claim: claim})
	code := claimErrorCode(err)
	if err == nil && resp.GetError() != nil {
		code = resp.GetError().ErrorCode()
		err = fmt.Errorf("%s: %s", code, resp.GetError().GetMessage())
	}
	if err == nil && resp.GetVolume() == nil {
		code, err = "invalid", errors.New("the claim response has no volume")
	}
	if err == nil {
		return resp, nil
	}
	err = volumeErr(rec, "claim", err)
	addVolumeEvent(rec.State, eventVolumeClaimFailed, err.Error(), s.clock.Now())
	if finalClaimCode(code) {
		rec.State.State = volumeFailed
		rec.ClaimSent = false // refused: the server holds no claim for us
		return nil, errors.Join(fatal(err), s.persist(rec))
	}
	return nil, errors.Join(retryable(err), s.persist(rec))
}

func (s *volumeSetup) mount(ctx context.Context, rec *clientstate.VolumeMount, req *messages.VolumeRequest, resp *messages.VolumeClaimResponse) error {
	vol, claim := resp.GetVolume(), resp.GetClaim()
	rec.PluginID, rec.ExternalID = vol.GetPluginID(), vol.GetExternalID()
	if rec.ExternalID == "" {
		rec.ExternalID = vol.GetID()
	}
	rec.AccessMode, rec.AttachmentMode = first(claim.GetAccessMode(), req.GetAccessMode()), first(claim.GetAttachmentMode(), req.GetAttachmentMode())
	rec.State.PluginID = rec.PluginID
	socket, info, ok := s.cfg.NodePlugin(rec.PluginID)
	if !ok {
		return s.fail(rec, retryable(volumeErr(rec, "node plugin", fmt.Errorf("no healthy node plugin for %s on this node", rec.PluginID))))
	}
	rec.ExternalNodeID = info.GetNodeInfo().GetID()
	stage := info.GetNodeInfo().GetRequiresNodeStageVolume()
	if stage {
		rec.StagingPath = stagingPath(s.cfg.Root, rec.PluginID, rec.VolumeID, rec.AttachmentMode, rec.AccessMode)
	}
	rec.TargetPath = publishPath(s.cfg.Root, s.alloc.GetID(), rec.VolumeID, rec.AttachmentMode, rec.AccessMode, rec.ReadOnly)
	rec.State.TargetPath = rec.TargetPath
	cctx, cancel := context.WithTimeout(ctx, s.cfg.CallTimeout)
	defer cancel()
	client, err := s.cfg.Dial(cctx, socket)
	if err != nil {
		return s.fail(rec, retryable(volumeErr(rec, "plugin "+rec.PluginID, err)))
	}
	defer client.Close()
	capability := &csi.VolumeCapability{AccessMode: rec.AccessMode, AttachmentMode: rec.AttachmentMode,
		FSType: vol.GetMountOptions().GetFSType(), MountFlags: vol.GetMountOptions().GetMountFlags()}
	if rec.StagingPath != "" {
		// The staged volume's turn, until published: no unstage in between.
		_, done, err := s.usage.turn(ctx, rec.StagingPath, s.alloc.GetID(), stage, false)
		defer done()
		if err != nil {
			return s.fail(rec, retryable(volumeErr(rec, "staged volume", err)))
		}
	}
	if stage {
		rec.Staged = true
		if err := s.persist(rec); err != nil {
			return err
		}
		err := safepath.MkdirAll(s.cfg.Root, rec.StagingPath, 0o755)
		if err == nil {
			err = client.NodeStage(cctx, &csi.StageRequest{VolumeID: rec.ExternalID, StagingPath: rec.StagingPath,
				PublishContext: claim.GetPublishContext(), Capability: capability, Secrets: vol.GetSecrets(), VolumeContext: vol.GetContext()})
		}
		if err != nil {
			return s.fail(rec, csiSetupError(rec, "NodeStageVolume", err))
		}
	}
	rec.Published = true
	if err := s.persist(rec); err != nil {
		return err
	}
	err = safepath.MkdirAll(s.cfg.Root, filepath.Dir(rec.TargetPath), 0o755)
	if err == nil {
		err = client.NodePublish(cctx, &csi.NodePublishRequest{VolumeID: rec.ExternalID, StagingPath: rec.StagingPath,
			TargetPath: rec.TargetPath, ReadOnly: rec.ReadOnly, PublishContext: claim.GetPublishContext(),
			Capability: capability, Secrets: vol.GetSecrets(), VolumeContext: vol.GetContext()})
	}
	if csi.Code(err) == codes.AlreadyExists {
		// The target exists: fine when it is already this volume's mount.
		if ok, merr := s.cfg.Mounter.Mounted(rec.TargetPath); merr == nil && ok {
			err = nil
		}
	}
	if err != nil {
		return s.fail(rec, csiSetupError(rec, "NodePublishVolume", err))
	}
	return s.bindAll(rec)
}

// bindAll binds the published target into the task dir of every task
// that runs in the host's root and mounts the volume (an isolated exec
// or a containerd task gets it in its own root from its driver), and
// marks the volume mounted.
func (s *volumeSetup) bindAll(rec *clientstate.VolumeMount) error {
	type bind struct {
		dst      string
		readOnly bool
	}
	var binds []bind
	for _, t := range groupOf(s.alloc).GetTasks() {
		if ownRoot(t) {
			continue // the driver mounts the target in the task's root (Isolation, "volume_mounts")
		}
		for _, vm := range t.GetVolumeMounts() {
			if vm.GetVolume() != rec.Name {
				continue
			}
			dst := volumeMountPath(s.root, s.alloc.GetID(), t.GetName(), vm.GetDestination())
			binds = append(binds, bind{dst: dst, readOnly: rec.ReadOnly || vm.GetReadOnly()})
			if !slices.Contains(rec.Binds, dst) {
				rec.Binds = append(rec.Binds, dst)
			}
		}
	}
	if err := s.persist(rec); err != nil {
		return err
	}
	for _, b := range binds {
		ok, err := s.cfg.Mounter.Mounted(b.dst)
		if err == nil && !ok {
			err = mountPoint(filepath.Join(s.root, s.alloc.GetID()), b.dst, rec.TargetPath)
		}
		if err == nil && !ok {
			err = s.cfg.Mounter.Bind(rec.TargetPath, b.dst, b.readOnly)
		}
		if err != nil {
			return s.fail(rec, fatal(volumeErr(rec, "bind into "+b.dst, err)))
		}
	}
	if rec.State.GetState() != volumeMounted {
		rec.State.State = volumeMounted
		addVolumeEvent(rec.State, eventVolumeMounted, "published at "+rec.TargetPath, s.clock.Now())
	}
	return s.persist(rec)
}

// fail records a failed step as an event and returns err.
func (s *volumeSetup) fail(rec *clientstate.VolumeMount, err error) error {
	addVolumeEvent(rec.State, eventVolumeSetupFailed, err.Error(), s.clock.Now())
	return errors.Join(err, s.persist(rec))
}

// persist writes the record and reports it. After the actor stopped
// (a crash or the agent's stop) it writes nothing: the next run starts
// from what was written before.
func (s *volumeSetup) persist(rec *clientstate.VolumeMount) error {
	if err := s.ctx.Err(); err != nil {
		return retryable(err)
	}
	if err := s.db.PutVolumeMount(s.alloc.GetID(), rec); err != nil {
		return fatal(volumeErr(rec, "write state", err))
	}
	s.progress(rec.Clone())
	return nil
}

func csiSetupError(rec *clientstate.VolumeMount, rpc string, err error) error {
	err = volumeErr(rec, rpc, err)
	if csi.IsRetryable(err) {
		return retryable(err)
	}
	return fatal(err)
}

// volumeErr is a failed setup step of rec's volume.
func volumeErr(rec *clientstate.VolumeMount, step string, err error) error {
	return &volumeError{VolumeID: rec.VolumeID, Name: rec.Name, Step: step, Err: err}
}

func first(a, b string) string {
	if a != "" {
		return a
	}
	return b
}

// addVolumeEvent appends an event, keeping the last maxEvents.
func addVolumeEvent(st *messages.AllocVolumeState, typ, msg string, now time.Time) {
	st.Events = append(st.Events, newEvent(typ, msg, now))
	if len(st.Events) > maxEvents {
		st.Events = st.Events[len(st.Events)-maxEvents:]
	}
}
