package clientstate

import (
	"encoding/json"
	"fmt"

	bolt "go.etcd.io/bbolt"
)

var keyNetwork = []byte("network")

// AllocNetwork is an allocation's bridge network as the client set it up:
// the CNI result to restore and tear it down with, and what the tasks and
// the server are told of it. A record with no RawResult is a setup that
// started but may not have finished: the network may exist, and must be
// restored (or torn down) all the same.
type AllocNetwork struct {
	// NetnsPath is the network namespace the tasks join.
	NetnsPath string
	// Interface and IP are the allocation's interface in the netns and
	// its address; Gateway is the bridge's.
	Interface string
	IP        string
	Gateway   string
	// RawResult is the CNI result (JSON), for CNI CHECK and DEL.
	RawResult []byte `json:",omitempty"`
}

// Clone returns a deep copy.
func (n *AllocNetwork) Clone() *AllocNetwork {
	if n == nil {
		return nil
	}
	c := *n
	c.RawResult = append([]byte(nil), n.RawResult...)
	return &c
}

// PutNetwork writes an allocation's network record now (synchronously):
// callers write it before the tasks that join the network start, and
// before the setup that it guards, from a worker.
func (d *DB) PutNetwork(allocID string, n *AllocNetwork) error {
	if n == nil {
		return fmt.Errorf("clientstate: nil network record")
	}
	buf, err := json.Marshal(n)
	if err != nil {
		return fmt.Errorf("clientstate: encode network of %s: %w", allocID, err)
	}
	return d.update(func(tx *bolt.Tx) error {
		b, err := allocBucket(tx, allocID)
		if err != nil {
			return err
		}
		return b.Put(keyNetwork, buf)
	})
}

// DeleteNetwork drops an allocation's network record (synchronously),
// once its network is torn down.
func (d *DB) DeleteNetwork(allocID string) error {
	return d.update(func(tx *bolt.Tx) error {
		b := tx.Bucket(bucketAllocs).Bucket([]byte(allocID))
		if b == nil {
			return nil
		}
		return b.Delete(keyNetwork)
	})
}

// Network reads an allocation's network record; nil when it has none.
func (d *DB) Network(allocID string) (*AllocNetwork, error) {
	var out *AllocNetwork
	err := d.bolt.View(func(tx *bolt.Tx) error {
		b := tx.Bucket(bucketAllocs).Bucket([]byte(allocID))
		if b == nil {
			return nil
		}
		var err error
		out, err = readNetwork(b)
		return err
	})
	return out, err
}

func readNetwork(b *bolt.Bucket) (*AllocNetwork, error) {
	raw := b.Get(keyNetwork)
	if raw == nil {
		return nil, nil
	}
	n := &AllocNetwork{}
	if err := json.Unmarshal(raw, n); err != nil {
		return nil, fmt.Errorf("network: %w", err)
	}
	return n, nil
}

// update runs a synchronous write, refused after Close.
func (d *DB) update(fn func(*bolt.Tx) error) error {
	d.mu.Lock()
	closed := d.closed
	d.mu.Unlock()
	if closed {
		return ErrClosed
	}
	return d.bolt.Update(fn)
}
