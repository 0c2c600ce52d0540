package clientstate

import (
	"fmt"
	"log/slog"
	"sync"
	"time"

	bolt "go.etcd.io/bbolt"
	"google.golang.org/protobuf/proto"

	"github.com/troupe-dev/troupe/messages"
)

var (
	bucketAllocs = []byte("allocs")
	keyAlloc     = []byte("alloc")
	bucketTasks  = []byte("task_states")
	bucketHandle = []byte("task_handles")
)

// StoredAlloc is one allocation as the client last saw it.
type StoredAlloc struct {
	Alloc      *messages.Allocation
	TaskStates map[string]*messages.TaskState
	Handles    map[string][]byte
	// Volumes are the allocation's CSI volume records, by group volume
	// name.
	Volumes map[string]*VolumeMount
	// Network is the allocation's bridge network record; nil when it has
	// none (no bridge network, or it was torn down).
	Network *AllocNetwork
}

// DB is the client's state file.
type DB struct {
	bolt   *bolt.DB
	logger *slog.Logger
	queue  chan item
	wg     sync.WaitGroup
	mu     sync.Mutex
	closed bool
}

// Open opens (or creates) the state file at path.
func Open(path string, logger *slog.Logger) (*DB, error) {
	if logger == nil {
		logger = slog.New(slog.DiscardHandler)
	}
	b, err := bolt.Open(path, 0o600, &bolt.Options{Timeout: 5 * time.Second})
	if err != nil {
		return nil, fmt.Errorf("clientstate: open %s: %w", path, err)
	}
	err = b.Update(func(tx *bolt.Tx) error {
		_, err := tx.CreateBucketIfNotExists(bucketAllocs)
		return err
	})
	if err != nil {
		b.Close()
		return nil, fmt.Errorf("clientstate: init: %w", err)
	}
	d := &DB{bolt: b, logger: logger, queue: make(chan item, 4096)}
	d.wg.Add(1)
	go d.writer()
	return d, nil
}

// item is one queued write, or (fn nil) a flush marker.
type item struct {
	fn   func(*bolt.Tx) error
	done chan struct{}
}

// writer applies queued writes in order, batching what is waiting into one
// transaction.
func (d *DB) writer() {
	defer d.wg.Done()
	for it := range d.queue {
		batch := []item{it}
	drain:
		for len(batch) < 256 {
			select {
			case next, ok := <-d.queue:
				if !ok {
					break drain
				}
				batch = append(batch, next)
			default:
				break drain
			}
		}
		err := d.bolt.Update(func(tx *bolt.Tx) error {
			for _, it := range batch {
				if it.fn == nil {
					continue
				}
				if err := it.fn(tx); err != nil {
					return err
				}
			}
			return nil
		})
		if err != nil {
			d.logger.Error("client state write failed", "error", err)
		}
		for _, it := range batch {
			if it.done != nil {
				close(it.done)
			}
		}
	}
}

func (d *DB) enqueue(fn func(*bolt.Tx) error) bool {
	return d.push(item{fn: fn})
}

func (d *DB) push(it item) bool {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.closed {
		return false
	}
	d.queue <- it
	return true
}

// Flush waits until every queued write is on disk.
func (d *DB) Flush() {
	done := make(chan struct{})
	if d.push(item{done: done}) {
		<-done
	}
}

// Close flushes and closes the file.
func (d *DB) Close() error {
	d.mu.Lock()
	if d.closed {
		d.mu.Unlock()
		return nil
	}
	d.closed = true
	close(d.queue)
	d.mu.Unlock()
	d.wg.Wait()
	return d.bolt.Close()
}

func allocBucket(tx *bolt.Tx, id string) (*bolt.Bucket, error) {
	return tx.Bucket(bucketAllocs).CreateBucketIfNotExists([]byte(id))
}

// PutAlloc queues a write of the allocation.
func (d *DB) PutAlloc(a *messages.Allocation) {
	buf, err := proto.Marshal(a)
	if err != nil {
		d.logger.Error("client state: encode alloc", "alloc", a.GetID(), "error", err)
		return
	}
	id := a.GetID()
	d.enqueue(func(tx *bolt.Tx) error {
		b, err := allocBucket(tx, id)
		if err != nil {
			return err
		}
		return b.Put(keyAlloc, buf)
	})
}

// PutTaskState queues a write of one task's state.
func (d *DB) PutTaskState(allocID, task string, st *messages.TaskState) {
	buf, err := proto.Marshal(st)
	if err != nil {
		return
	}
	d.enqueue(func(tx *bolt.Tx) error {
		b, err := allocBucket(tx, allocID)
		if err != nil {
			return err
		}
		tb, err := b.CreateBucketIfNotExists(bucketTasks)
		if err != nil {
			return err
		}
		return tb.Put([]byte(task), buf)
	})
}

// PutTaskHandle writes a task's driver handle now (synchronously), so that
// a crash right after a task starts still finds it.
func (d *DB) PutTaskHandle(allocID, task string, handle []byte) error {
	return d.bolt.Update(func(tx *bolt.Tx) error {
		b, err := allocBucket(tx, allocID)
		if err != nil {
			return err
		}
		hb, err := b.CreateBucketIfNotExists(bucketHandle)
		if err != nil {
			return err
		}
		return hb.Put([]byte(task), handle)
	})
}

// TaskHandle reads a task's driver handle; nil when none is stored.
func (d *DB) TaskHandle(allocID, task string) ([]byte, error) {
	var out []byte
	err := d.bolt.View(func(tx *bolt.Tx) error {
		b := tx.Bucket(bucketAllocs).Bucket([]byte(allocID))
		if b == nil {
			return nil
		}
		if hb := b.Bucket(bucketHandle); hb != nil {
			if v := hb.Get([]byte(task)); v != nil {
				out = append([]byte(nil), v...)
			}
		}
		return nil
	})
	return out, err
}

// DeleteAlloc queues removal of everything stored for an allocation.
func (d *DB) DeleteAlloc(id string) {
	d.enqueue(func(tx *bolt.Tx) error {
		err := tx.Bucket(bucketAllocs).DeleteBucket([]byte(id))
		if err == bolt.ErrBucketNotFound {
			return nil
		}
		return err
	})
}

// Allocs reads every stored allocation with its task states and handles.
func (d *DB) Allocs() ([]*StoredAlloc, error) {
	var out []*StoredAlloc
	err := d.bolt.View(func(tx *bolt.Tx) error {
		return tx.Bucket(bucketAllocs).ForEachBucket(func(k []byte) error {
			sa, err := readAlloc(tx.Bucket(bucketAllocs).Bucket(k))
			if err != nil {
				return fmt.Errorf("clientstate: alloc %s: %w", k, err)
			}
			if sa != nil {
				out = append(out, sa)
			}
			return nil
		})
	})
	return out, err
}

// Alloc reads one stored allocation; nil when unknown.
func (d *DB) Alloc(id string) (*StoredAlloc, error) {
	var out *StoredAlloc
	err := d.bolt.View(func(tx *bolt.Tx) error {
		b := tx.Bucket(bucketAllocs).Bucket([]byte(id))
		if b == nil {
			return nil
		}
		var err error
		out, err = readAlloc(b)
		return err
	})
	return out, err
}

func readAlloc(b *bolt.Bucket) (*StoredAlloc, error) {
	raw := b.Get(keyAlloc)
	if raw == nil {
		return nil, nil
	}
	sa := &StoredAlloc{Alloc: &messages.Allocation{}, TaskStates: map[string]*messages.TaskState{}, Handles: map[string][]byte{}}
	if err := proto.Unmarshal(raw, sa.Alloc); err != nil {
		return nil, err
	}
	if tb := b.Bucket(bucketTasks); tb != nil {
		err := tb.ForEach(func(k, v []byte) error {
			st := &messages.TaskState{}
			if err := proto.Unmarshal(v, st); err != nil {
				return err
			}
			sa.TaskStates[string(k)] = st
			return nil
		})
		if err != nil {
			return nil, err
		}
	}
	if hb := b.Bucket(bucketHandle); hb != nil {
		_ = hb.ForEach(func(k, v []byte) error {
			sa.Handles[string(k)] = append([]byte(nil), v...)
			return nil
		})
	}
	vols, err := readVolumes(b)
	if err != nil {
		return nil, err
	}
	sa.Volumes = vols
	if sa.Network, err = readNetwork(b); err != nil {
		return nil, err
	}
	return sa, nil
}
