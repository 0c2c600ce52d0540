package alloc

import (
	"context"
	"errors"
	"fmt"

	"github.com/troupe-dev/troupe/actors"
	"github.com/troupe-dev/troupe/messages"
	"github.com/troupe-dev/troupe/runtime/clientstate"
	"github.com/troupe-dev/troupe/runtime/csi"
)

// errDetach marks an attempt that failed at the node-detached report,
// after the node side was done.
var errDetach = errors.New("node detached report failed")

// teardown undoes, in order, what a volume record says may be done: the
// task binds, NodeUnpublishVolume, NodeUnstageVolume (only when no other
// allocation on the host uses the staged volume), and then, only once the
// node side is done, the node-detached report to the server. Each step
// clears its flag in the record and writes it, so the next attempt (or a
// restarted agent) resumes where this one stopped. A CSI NotFound is
// success. attempt blocks; it runs in a worker.
type teardown struct {
	cfg     *CSIConfig
	db      *clientstate.DB
	allocID string
	nodeID  string
	clock   actors.Clock
	usage   *usageClient // turns on staged volumes; set on start
}

// errNoNodePlugin: the node plugin is not (yet) seen healthy on this node,
// e.g. right after an agent restart, before its first probe.
var errNoNodePlugin = errors.New("no healthy node plugin")

// attempt runs one try on rec, which it changes and writes; nil when the
// volume is unpublished and reported detached.
func (t *teardown) attempt(ctx context.Context, rec *clientstate.VolumeMount) error {
	rec.State.State = VolumeUnpublishing
	if err := t.persist(ctx, rec); err != nil {
		return err
	}
	if nodeSideLeft(rec) {
		if err := t.node(ctx, rec); err != nil {
			if ctx.Err() != nil { // stopping: not a failure of the plugin
				return err
			}
			rec.State.Attempts++
			t.failed(rec, eventVolumeUnpublishFailed, fmt.Sprintf("attempt %d: %v", rec.State.Attempts, err))
			return errors.Join(err, t.persist(ctx, rec))
		}
		addVolumeEvent(rec.State, eventVolumeUnpublished, "unpublished from this node", t.clock.Now())
		if err := t.persist(ctx, rec); err != nil {
			return err
		}
	}
	if rec.ClaimSent {
		cctx, cancel := context.WithTimeout(ctx, t.cfg.CallTimeout)
		err := t.cfg.Claimer.NodeDetached(cctx, &messages.VolumeNodeDetachedRequest{
			VolumeID: rec.VolumeID, AllocationID: t.allocID, NodeID: t.nodeID})
		cancel()
		if err != nil && claimErrorCode(err) != messages.CodeNotFound {
			err = fmt.Errorf("%w: %w: %w", errVolumeTeardown, errDetach, err)
			t.failed(rec, eventVolumeDetachFailed, err.Error())
			return errors.Join(err, t.persist(ctx, rec))
		}
		rec.ClaimSent = false
		addVolumeEvent(rec.State, eventVolumeDetached, "the server was told the node let go of the volume", t.clock.Now())
	}
	rec.State.State = volumeUnpublished
	return t.persist(ctx, rec)
}

// nodeSideLeft reports whether anything may still be mounted on the node.
func nodeSideLeft(rec *clientstate.VolumeMount) bool {
	return len(rec.Binds) > 0 || rec.Published || rec.Staged
}

// node unbinds the task mounts, unpublishes and unstages.
func (t *teardown) node(ctx context.Context, rec *clientstate.VolumeMount) error {
	for len(rec.Binds) > 0 {
		if err := t.cfg.Mounter.Unmount(rec.Binds[0]); err != nil {
			return fmt.Errorf("%w: unbind %s: %w", errVolumeTeardown, rec.Binds[0], err)
		}
		rec.Binds = rec.Binds[1:]
		if err := t.persist(ctx, rec); err != nil {
			return err
		}
	}
	if !rec.Published && !rec.Staged {
		return nil
	}
	socket, _, ok := t.cfg.NodePlugin(rec.PluginID)
	if !ok {
		return fmt.Errorf("%w: %w for %s", errVolumeTeardown, errNoNodePlugin, rec.PluginID)
	}
	cctx, cancel := context.WithTimeout(ctx, t.cfg.CallTimeout)
	defer cancel()
	client, err := t.cfg.Dial(cctx, socket)
	if err != nil {
		return fmt.Errorf("%w: plugin %s: %w", errVolumeTeardown, rec.PluginID, err)
	}
	defer client.Close()
	if rec.Published {
		if err := client.NodeUnpublish(cctx, rec.ExternalID, rec.TargetPath); err != nil && !csi.IsNotFound(err) {
			return fmt.Errorf("%w: %w", errVolumeTeardown, err)
		}
		rec.Published = false
		if err := t.persist(ctx, rec); err != nil {
			return err
		}
	}
	if rec.Staged {
		if err := t.release(cctx, client, rec); err != nil {
			return err
		}
		rec.Staged = false
		return t.persist(ctx, rec)
	}
	return nil
}

// release lets go of rec's staged volume in its turn at the usage actor:
// another allocation here may still use it; the last one to let go
// unstages it, before the turn ends.
func (t *teardown) release(ctx context.Context, client csi.Client, rec *clientstate.VolumeMount) error {
	users, done, err := t.usage.turn(ctx, rec.StagingPath, t.allocID, false, true)
	defer done()
	if err != nil {
		return fmt.Errorf("%w: %w", errVolumeTeardown, err)
	}
	if users > 0 {
		return nil
	}
	if err := client.NodeUnstage(ctx, rec.ExternalID, rec.StagingPath); err != nil && !csi.IsNotFound(err) {
		return fmt.Errorf("%w: %w", errVolumeTeardown, err)
	}
	return nil
}

// failed records a failed attempt and when the failures began.
func (t *teardown) failed(rec *clientstate.VolumeMount, typ, msg string) {
	now := t.clock.Now()
	if rec.RetryStart == 0 {
		rec.RetryStart = now.UnixNano()
	}
	addVolumeEvent(rec.State, typ, msg, now)
}

// persist writes the record; after the actor stopped it writes nothing
// (the next incarnation resumes from what was written before).
func (t *teardown) persist(ctx context.Context, rec *clientstate.VolumeMount) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	if err := t.db.PutVolumeMount(t.allocID, rec); err != nil {
		return fmt.Errorf("%w: write state: %w", errVolumeTeardown, err)
	}
	return nil
}
