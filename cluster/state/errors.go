package state

import (
	"errors"
	"fmt"

	"github.com/troupe-dev/troupe/messages"
)

var (
	// ErrJobNotFound is the Apply response to a deregister of an unknown job.
	ErrJobNotFound = errors.New("state: job not found")
	// ErrNodeNotFound is the Apply response to a status or eligibility
	// update of an unknown node.
	ErrNodeNotFound = errors.New("state: node not found")
	// ErrAllocNotFound is the Apply response to a StopAlloc of an unknown
	// allocation.
	ErrAllocNotFound = errors.New("state: allocation not found")
	// ErrNodeSecretMismatch is the Apply response to a RegisterNode whose
	// SecretID is not the one the node is registered with.
	ErrNodeSecretMismatch = errors.New("state: node secret ID does not match")
	// ErrBadCommand is the Apply response to a log entry that does not
	// decode or carries no known command.
	ErrBadCommand = errors.New("state: bad command")
	// ErrEventsLost says the event buffer no longer holds the events a
	// reader asked for (it started too far back, or read too slowly).
	ErrEventsLost = errors.New("state: events lost")
	// ErrBadIndexArg is returned for an index lookup argument of the wrong type.
	ErrBadIndexArg = errors.New("state: bad index argument")
	// ErrBadSnapshot is returned by Restore for a stream that does not decode.
	ErrBadSnapshot = errors.New("state: bad snapshot")
	// ErrJobModifyIndex is the Apply response to a RegisterJob with
	// EnforceIndex whose index is not the stored job's.
	ErrJobModifyIndex = errors.New("state: job modify index conflict")
)

// ErrInvalidSchedulerConfig is the Apply response to a SetSchedulerConfig
// whose configuration has a bad value; it changed nothing.
var ErrInvalidSchedulerConfig = errors.New("state: invalid scheduler configuration")

// ErrPlacementRefused says why the FSM refused a plan's placement (logged;
// the plan result lists the refused IDs).
var ErrPlacementRefused = errors.New("state: placement refused")

// CSI volume errors: the Apply response to a volume command that changed
// nothing. The claim errors are also what the volume actor answers, as it
// checks claims with the same code (Claims.Check).
var (
	// ErrVolumeNotFound: a command for a volume that is not registered.
	ErrVolumeNotFound = errors.New("state: volume not found")
	// ErrInvalidVolume: a volume to register without an ID or plugin ID,
	// or with an unknown capability, or with an ID already used in another
	// namespace (volume commands name volumes by ID alone).
	ErrInvalidVolume = errors.New("state: invalid volume")
	// ErrVolumeInUse: deregister of a volume that still has claims (with
	// Force: taken claims), or a re-register that would change what its
	// claims use (plugin, external ID, the capability in use).
	ErrVolumeInUse = errors.New("state: volume in use")
	// ErrClaimNotFound: a claim update for an allocation with no claim on
	// the volume.
	ErrClaimNotFound = errors.New("state: volume claim not found")
	// ErrClaimConflict: the claim does not fit next to the volume's other
	// claims (a second writer, a second node on a single-node volume, the
	// same allocation asking for a different claim). See ClaimConflictError.
	ErrClaimConflict = errors.New("state: volume claim conflict")
	// ErrVolumeReadOnly: a write claim on a reader-only access mode.
	ErrVolumeReadOnly = errors.New("state: volume is read-only")
	// ErrInvalidClaim: a claim missing a field or with an unknown mode.
	ErrInvalidClaim = errors.New("state: invalid volume claim")
	// ErrUnsupportedCapability: the claim's access and attachment modes are
	// not among the volume's requested capabilities.
	ErrUnsupportedCapability = errors.New("state: capability not supported by the volume")
	// ErrModeMismatch: the claim's modes differ from the ones in use.
	ErrModeMismatch = errors.New("state: volume modes differ from the ones in use")
	// ErrClaimReleasing: the allocation's claim is being released.
	ErrClaimReleasing = errors.New("state: volume claim is being released")
	// ErrIllegalTransition: a claim state change the table forbids.
	ErrIllegalTransition = errors.New("state: illegal claim transition")
	// ErrUnknownClaimState: a claim state that is not one of the five.
	ErrUnknownClaimState = errors.New("state: unknown claim state")
)

// ClaimConflictError names the volume and the allocation whose claim is in
// the way. It matches ErrClaimConflict.
type ClaimConflictError struct {
	VolumeID string
	AllocID  string // the allocation holding the conflicting claim
	NodeID   string // its node
	Reason   string
}

func (e *ClaimConflictError) Error() string {
	return fmt.Sprintf("%v: volume %q: %s (held by alloc %q on node %q)",
		ErrClaimConflict, e.VolumeID, e.Reason, e.AllocID, e.NodeID)
}

// Is makes errors.Is(err, ErrClaimConflict) true.
func (e *ClaimConflictError) Is(target error) bool { return target == ErrClaimConflict }

// Node pool errors: the Apply response to a node pool command, or to a
// node or job registration naming a pool, that changed nothing.
var (
	// ErrNodePoolNotFound: a pool to delete that does not exist.
	ErrNodePoolNotFound = errors.New("state: node pool not found")
	// ErrInvalidNodePool: a pool with a bad name, description or a field
	// troupe does not implement; a node in "all"; a job in a pool that
	// does not exist.
	ErrInvalidNodePool = errors.New("state: invalid node pool")
	// ErrNodePoolBuiltIn: a change to "default" or "all".
	ErrNodePoolBuiltIn = errors.New("state: built-in node pool")
	// ErrNodePoolInUse: a pool to delete that still has nodes or jobs
	// that are not dead.
	ErrNodePoolInUse = errors.New("state: node pool in use")
	// ErrGCTooLarge is the Apply response to a GarbageCollect naming more
	// than MaxGCItems items.
	ErrGCTooLarge = errors.New("state: garbage collection batch too large")
)

// Variable errors: the Apply response to a variable command that changed
// nothing (and the checks' errors on the leader before it proposes one).
var (
	// ErrInvalidVariable: a bad path or namespace, no items, no sealed
	// data, an unknown op.
	ErrInvalidVariable = errors.New("state: invalid variable")
	// ErrVariableTooLarge: items over MaxVariableSize.
	ErrVariableTooLarge = errors.New("state: variable too large")
	// ErrVariableCASConflict: a checked write whose index is not the
	// stored variable's. See VariableCASError.
	ErrVariableCASConflict = errors.New("state: variable check-and-set conflict")
	// ErrInvalidRootKey: a RotateKeyring without a key ID or a 32-byte key,
	// or with a key ID already in the keyring.
	ErrInvalidRootKey = errors.New("state: invalid root key")
)

// VariableCASError carries the variable a checked write conflicted with
// (nil when none is stored). It matches ErrVariableCASConflict.
type VariableCASError struct {
	CAS     uint64
	Current *messages.Variable
}

func (e *VariableCASError) Error() string {
	if e.Current == nil {
		return fmt.Sprintf("%v: index %d, but no variable exists", ErrVariableCASConflict, e.CAS)
	}
	return fmt.Sprintf("%v: index %d, but %s/%s is at %d", ErrVariableCASConflict, e.CAS,
		e.Current.Namespace, e.Current.Path, e.Current.ModifyIndex)
}

// Is makes errors.Is(err, ErrVariableCASConflict) true.
func (e *VariableCASError) Is(target error) bool { return target == ErrVariableCASConflict }

// Namespace errors: the Apply response to a namespace command, or to a
// job, volume or variable registration naming a namespace, that changed
// nothing.
var (
	// ErrNamespaceNotFound: a namespace to delete, or that a job, volume
	// or variable to register names, that does not exist.
	ErrNamespaceNotFound = errors.New("state: namespace not found")
	// ErrInvalidNamespace: a namespace with a bad name or description.
	ErrInvalidNamespace = errors.New("state: invalid namespace")
	// ErrNamespaceBuiltIn: deleting "default".
	ErrNamespaceBuiltIn = errors.New("state: built-in namespace")
	// ErrNamespaceInUse: a namespace to delete that still has jobs that
	// are not dead, volumes or variables.
	ErrNamespaceInUse = errors.New("state: namespace in use")
)
