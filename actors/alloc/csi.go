package alloc

import (
	"context"
	"errors"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/asynkron/protoactor-go/actor"

	"github.com/troupe-dev/troupe/actors"
	"github.com/troupe-dev/troupe/cluster/remote"
	"github.com/troupe-dev/troupe/messages"
	"github.com/troupe-dev/troupe/runtime/csi"
)

// VolumeClaimer asks the leader for volume claims and reports node
// detaches (the agent implements it as RPCs to the leader).
//
// Claim is idempotent per allocation. A refusal comes back as
// resp.Error, or as an error that wraps a *remote.RemoteError: codes
// not_found, conflict and invalid are final, every other code and every
// other error (transport) is retried. NodeDetached's not_found (the claim
// is gone) counts as done.
type VolumeClaimer interface {
	Claim(ctx context.Context, req *messages.VolumeClaimRequest) (*messages.VolumeClaimResponse, error)
	NodeDetached(ctx context.Context, req *messages.VolumeNodeDetachedRequest) error
}

// Mounter binds a published volume into a task's directory. Unmount of a
// path that is not mounted succeeds; Mounted reports whether a path is a
// mount point (or the symlink that stands in for one where mounting is
// not allowed).
type Mounter interface {
	Bind(src, dst string, readOnly bool) error
	Unmount(path string) error
	Mounted(path string) (bool, error)
}

// CSIConfig is the client's CSI support for allocations. A nil CSIConfig
// in Spec means none: an allocation with a csi volume fails its setup.
type CSIConfig struct {
	Claimer VolumeClaimer
	// NodePlugin finds the healthy node plugin instance of pluginID on this
	// node: its socket and fingerprint (info.NodeInfo.ID is the plugin's
	// node ID, RequiresNodeStageVolume says it stages). It is asked again
	// on every attempt: the socket moves when the plugin task restarts.
	NodePlugin func(pluginID string) (socket string, info *messages.CSIInfo, ok bool)
	// Dial connects to a plugin socket (csi.Dial; a csi.Fake in tests).
	Dial func(ctx context.Context, socket string) (csi.Client, error)
	// Root holds staging and publish targets (<data-dir>/csi).
	Root    string
	Mounter Mounter
	// Retry is the backoff of node unpublish and node-detached reports
	// (zero: actors.DefaultRetry). Past its Deadline the volume is
	// marked failed and the allocation goes on.
	Retry actors.Retry
	// ClaimRetry is the backoff of setup after a retryable error (claim
	// refused for now, plugin not healthy yet, plugin busy), for at most
	// ClaimAttempts tries (zero: defaultClaimAttempts).
	ClaimRetry    actors.Retry
	ClaimAttempts int
	// Usage is the client's usage actor (NewUsageActor, started with
	// NewUsageFromState): it counts the allocations on this host using
	// each staged volume and serialises the node-side work on each. Share
	// one between all alloc actors; nil: each alloc actor starts its own
	// (its volumes counted alone).
	Usage *actor.PID
	// CallTimeout bounds one plugin or server call (zero: 2 minutes).
	CallTimeout time.Duration
}

// defaultClaimAttempts is how many times setup tries a volume before the
// allocation fails.
const defaultClaimAttempts = 10

// withDefaults fills the zero fields.
func (c *CSIConfig) withDefaults() *CSIConfig {
	out := *c
	out.Retry = out.Retry.Or(actors.DefaultRetry())
	out.ClaimRetry = out.ClaimRetry.Or(actors.DefaultRetry())
	if out.ClaimAttempts <= 0 {
		out.ClaimAttempts = defaultClaimAttempts
	}
	if out.CallTimeout <= 0 {
		out.CallTimeout = 2 * time.Minute
	}
	return &out
}

// Volume states (AllocVolumeState.State).
const (
	volumeClaiming     = "claiming"
	volumeMounted      = "mounted"
	VolumeUnpublishing = "unpublishing"
	volumeUnpublished  = "unpublished"
	volumeFailed       = "failed"
)

// Volume event types.
const (
	eventVolumeClaimFailed     = "Claim Failed"
	eventVolumeSetupFailed     = "Setup Failed"
	eventVolumeMounted         = "Mounted"
	eventVolumeRemounting      = "Remounting"
	eventVolumeUnpublishFailed = "Unpublish Failed"
	eventVolumeUnpublished     = "Unpublished"
	eventVolumeDetachFailed    = "Detach Failed"
	eventVolumeDetached        = "Node Detached"
	eventVolumeGaveUp          = "Unpublish Gave Up"
)

// volumeActive reports whether a volume state may still hold something
// on this node or on the server.
func volumeActive(state string) bool {
	return state == volumeClaiming || state == volumeMounted || state == VolumeUnpublishing
}

// csiVolumes are the group's csi volume requests by name.
func csiVolumes(a *messages.Allocation) map[string]*messages.VolumeRequest {
	out := map[string]*messages.VolumeRequest{}
	for name, v := range groupOf(a).GetVolumes() {
		if v.GetType() == "csi" {
			out[name] = v
		}
	}
	return out
}

// claimSource is the volume ID a request claims: per_alloc volumes add
// the allocation's index, as Nomad does ("data[2]").
func claimSource(a *messages.Allocation, v *messages.VolumeRequest) string {
	if v.GetPerAlloc() {
		return v.GetSource() + "[" + strconv.FormatUint(uint64(a.GetIndex()), 10) + "]"
	}
	return v.GetSource()
}

// claimErrorCode is the server's code of a claim or detach error ("" for
// a transport error).
func claimErrorCode(err error) messages.ErrorCode {
	var re *remote.RemoteError
	if errors.As(err, &re) {
		return re.ErrorCode()
	}
	return ""
}

// finalClaimCode: the server refused for good; retrying changes nothing.
func finalClaimCode(code messages.ErrorCode) bool {
	return code == messages.CodeNotFound || code == messages.CodeConflict || code == messages.CodeInvalid
}

// volumeMountPath is where a task in the host's root (a CSI plugin's)
// sees a volume: destination "/data" is <task dir>/data. The path stays
// inside the task dir whatever the destination says.
func volumeMountPath(allocRoot, allocID, task, destination string) string {
	return filepath.Join(TaskDir(allocRoot, allocID, task), filepath.Clean("/"+destination))
}

// volumeEnvName is the variable that tells a task where a volume is
// mounted: TROUPE_VOLUME_<NAME>, uppercased, anything not a letter or a
// digit becoming '_'.
func volumeEnvName(volume string) string {
	b := []byte(strings.ToUpper(volume))
	for i, c := range b {
		if (c < 'A' || c > 'Z') && (c < '0' || c > '9') {
			b[i] = '_'
		}
	}
	return "TROUPE_VOLUME_" + string(b)
}

// pathSafe makes an ID usable as one path element: separators and NULs
// become '_', and "", "." and ".." (which name no element of their own)
// get a '_' in front.
func pathSafe(id string) string {
	if id == "" || id == "." || id == ".." {
		return "_" + id
	}
	return strings.NewReplacer("/", "_", "\x00", "_").Replace(id)
}

// usageDir names a volume's mode in its paths ("file-system-single-node-writer").
func usageDir(attachment, access string) string {
	return pathSafe(attachment + "-" + access)
}

// stagingPath is where a node plugin stages a volume for this host:
// <root>/staging/<plugin>/<volume>/<mode>. Allocations on the host using
// the same volume in the same mode share it.
func stagingPath(root, pluginID, volumeID, attachment, access string) string {
	return filepath.Join(root, "staging", pathSafe(pluginID), pathSafe(volumeID), usageDir(attachment, access))
}

// publishPath is where a node plugin publishes a volume for one
// allocation: <root>/per-alloc/<alloc>/<volume>/<ro|rw>-<mode>.
func publishPath(root, allocID, volumeID, attachment, access string, readOnly bool) string {
	rw := "rw-"
	if readOnly {
		rw = "ro-"
	}
	return filepath.Join(root, "per-alloc", pathSafe(allocID), pathSafe(volumeID), rw+usageDir(attachment, access))
}
