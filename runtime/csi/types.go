package csi

import "time"

// PluginCaps is what GetPluginCapabilities reports.
type PluginCaps struct {
	// ControllerService: the plugin has a controller service.
	ControllerService bool
	// VolumeAccessibility: volumes are not equally reachable from every
	// node (topology constraints apply).
	VolumeAccessibility bool
	// OnlineExpansion, OfflineExpansion: volume expansion support.
	OnlineExpansion  bool
	OfflineExpansion bool
}

// ControllerCaps is what ControllerGetCapabilities reports.
type ControllerCaps struct {
	CreateDelete       bool // CreateVolume / DeleteVolume
	PublishUnpublish   bool // ControllerPublish / ControllerUnpublish
	ListVolumes        bool
	GetCapacity        bool
	Snapshots          bool // CreateSnapshot / DeleteSnapshot
	ListSnapshots      bool
	Clone              bool
	PublishReadOnly    bool
	Expand             bool // ControllerExpandVolume
	ListPublishedNodes bool
	GetVolume          bool
}

// NodeCaps is what NodeGetCapabilities reports.
type NodeCaps struct {
	StageUnstage   bool // NodeStage / NodeUnstage must wrap NodePublish
	GetVolumeStats bool
	Expand         bool
}

// NodeInfo is what NodeGetInfo reports. MaxVolumes 0 means no limit;
// Topology is nil when the plugin reports none.
type NodeInfo struct {
	NodeID     string
	MaxVolumes int64
	Topology   map[string]string
}

// PublishRequest is a ControllerPublishVolume call.
type PublishRequest struct {
	VolumeID      string
	NodeID        string
	Capability    *VolumeCapability
	ReadOnly      bool
	Secrets       map[string]string
	VolumeContext map[string]string
}

// CreateRequest is a CreateVolume call. Name is the idempotency key.
type CreateRequest struct {
	Name string
	// RequiredBytes and LimitBytes bound the capacity; 0 means unset.
	RequiredBytes int64
	LimitBytes    int64
	Capabilities  []*VolumeCapability
	Parameters    map[string]string
	Secrets       map[string]string
	// SnapshotID or SourceVolumeID, at most one, is the content source.
	SnapshotID     string
	SourceVolumeID string
	// RequisiteTopologies and PreferredTopologies constrain placement.
	RequisiteTopologies []map[string]string
	PreferredTopologies []map[string]string
}

// Volume is a volume that CreateVolume made.
type Volume struct {
	ID            string
	CapacityBytes int64
	Context       map[string]string
	Topologies    []map[string]string
}

// SnapshotRequest is a CreateSnapshot call. Name is the idempotency key.
type SnapshotRequest struct {
	SourceVolumeID string
	Name           string
	Secrets        map[string]string
	Parameters     map[string]string
}

// Snapshot is a snapshot that CreateSnapshot made.
type Snapshot struct {
	ID             string
	SourceVolumeID string
	SizeBytes      int64
	CreateTime     time.Time
	ReadyToUse     bool
}

// StageRequest is a NodeStageVolume call.
type StageRequest struct {
	VolumeID       string
	PublishContext map[string]string
	StagingPath    string
	Capability     *VolumeCapability
	Secrets        map[string]string
	VolumeContext  map[string]string
}

// NodePublishRequest is a NodePublishVolume call. StagingPath is required
// when the plugin has NodeCaps.StageUnstage.
type NodePublishRequest struct {
	VolumeID       string
	PublishContext map[string]string
	StagingPath    string
	TargetPath     string
	Capability     *VolumeCapability
	ReadOnly       bool
	Secrets        map[string]string
	VolumeContext  map[string]string
}
