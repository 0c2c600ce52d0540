package clientstate

import (
	"encoding/json"
	"fmt"
	"slices"

	bolt "go.etcd.io/bbolt"
	"google.golang.org/protobuf/proto"

	"github.com/troupe-dev/troupe/messages"
)

var bucketVolumes = []byte("csi_volumes")

// VolumeMount is what the client did, or may have done, for one CSI volume
// of an allocation. The flags say what may need undoing: each is set
// (and written) before the step it guards runs, and cleared once the step
// is undone, so a crash at any point leaves a record that tells the
// restarted agent exactly what to clean up.
type VolumeMount struct {
	// Name is the group's name for the volume (the VolumeStates key).
	Name string
	// VolumeID is troupe's volume ID (claims, node-detached reports).
	VolumeID string
	// PluginID, ExternalID and ExternalNodeID come from the claim and the
	// node plugin: the plugin and its names for the volume and the node.
	PluginID       string
	ExternalID     string
	ExternalNodeID string
	AccessMode     string
	AttachmentMode string
	ReadOnly       bool
	// StagingPath (empty when the plugin does not stage) and TargetPath
	// are where NodeStageVolume and NodePublishVolume mount the volume.
	StagingPath string
	TargetPath  string
	// ClaimSent: a claim was asked for, so the server may hold one.
	ClaimSent bool
	// Staged and Published: NodeStage / NodePublish may have mounted.
	Staged    bool
	Published bool
	// Binds are the task mount points that may hold a bind mount of
	// TargetPath.
	Binds []string
	// RetryStart is when teardown first failed (unix nanos), for the
	// retry deadline; 0 when it has not failed.
	RetryStart int64
	// State is what the allocation reports for the volume.
	State *messages.AllocVolumeState `json:"-"`
}

// Clone returns a deep copy.
func (m *VolumeMount) Clone() *VolumeMount {
	if m == nil {
		return nil
	}
	c := *m
	c.Binds = slices.Clone(m.Binds)
	if m.State != nil {
		c.State = proto.Clone(m.State).(*messages.AllocVolumeState)
	}
	return &c
}

// volumeWire is VolumeMount as stored: JSON with the state as protobuf.
type volumeWire struct {
	VolumeMount
	StateProto []byte
}

func encodeVolume(m *VolumeMount) ([]byte, error) {
	w := volumeWire{VolumeMount: *m}
	if m.State != nil {
		b, err := proto.Marshal(m.State)
		if err != nil {
			return nil, err
		}
		w.StateProto = b
	}
	return json.Marshal(&w)
}

func decodeVolume(raw []byte) (*VolumeMount, error) {
	var w volumeWire
	if err := json.Unmarshal(raw, &w); err != nil {
		return nil, err
	}
	m := w.VolumeMount
	m.State = &messages.AllocVolumeState{}
	if err := proto.Unmarshal(w.StateProto, m.State); err != nil {
		return nil, err
	}
	return &m, nil
}

// PutVolumeMount writes one volume record of an allocation now
// (synchronously): callers write it before the mount or unmount step it
// describes, from a worker, never from an actor's Receive.
func (d *DB) PutVolumeMount(allocID string, m *VolumeMount) error {
	if m == nil || m.Name == "" {
		return fmt.Errorf("clientstate: volume record without a name")
	}
	buf, err := encodeVolume(m)
	if err != nil {
		return fmt.Errorf("clientstate: encode volume %s: %w", m.Name, err)
	}
	d.mu.Lock()
	closed := d.closed
	d.mu.Unlock()
	if closed {
		return ErrClosed
	}
	return d.bolt.Update(func(tx *bolt.Tx) error {
		b, err := allocBucket(tx, allocID)
		if err != nil {
			return err
		}
		vb, err := b.CreateBucketIfNotExists(bucketVolumes)
		if err != nil {
			return err
		}
		return vb.Put([]byte(m.Name), buf)
	})
}

// VolumeMounts reads an allocation's volume records by name; empty when
// it has none.
func (d *DB) VolumeMounts(allocID string) (map[string]*VolumeMount, error) {
	out := map[string]*VolumeMount{}
	err := d.bolt.View(func(tx *bolt.Tx) error {
		b := tx.Bucket(bucketAllocs).Bucket([]byte(allocID))
		if b == nil {
			return nil
		}
		var err error
		out, err = readVolumes(b)
		return err
	})
	return out, err
}

func readVolumes(b *bolt.Bucket) (map[string]*VolumeMount, error) {
	out := map[string]*VolumeMount{}
	vb := b.Bucket(bucketVolumes)
	if vb == nil {
		return out, nil
	}
	err := vb.ForEach(func(k, v []byte) error {
		m, err := decodeVolume(v)
		if err != nil {
			return fmt.Errorf("volume %s: %w", k, err)
		}
		out[string(k)] = m
		return nil
	})
	return out, err
}
