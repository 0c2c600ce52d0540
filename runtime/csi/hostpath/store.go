package hostpath

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
)

// On disk, under Root:
//
//	<id>/                      a volume's data
//	.meta/volumes/<id>.json    its volumeMeta (absent for hand-made dirs)
//	.snapshots/<id>/           a snapshot's copy of its volume
//	.meta/snapshots/<id>.json  its snapshotMeta
type kind string

const (
	kindVolume   kind = "volumes"
	kindSnapshot kind = "snapshots"
)

func metaDir(root string, k kind) string { return filepath.Join(root, ".meta", string(k)) }
func snapshotsDir(root string) string    { return filepath.Join(root, ".snapshots") }

// volumeMeta is what the plugin remembers about a volume.
type volumeMeta struct {
	ID            string `json:"id"`
	CapacityBytes int64  `json:"capacity_bytes"`
	SnapshotID    string `json:"snapshot_id,omitempty"`
	// Topology is where the volume is accessible from (CreateVolume's
	// accessible_topology); empty for a plugin without one.
	Topology map[string]string `json:"topology,omitempty"`
}

// snapshotMeta is what the plugin remembers about a snapshot.
type snapshotMeta struct {
	ID              string `json:"id"`
	SourceVolumeID  string `json:"source_volume_id"`
	SizeBytes       int64  `json:"size_bytes"`
	CreatedUnixNano int64  `json:"created_unix_nano"`
}

// validID reports whether id can name a directory under Root.
func validID(id string) bool {
	return id != "" && len(id) <= 128 && !strings.HasPrefix(id, ".") &&
		!strings.ContainsAny(id, "/\\\x00")
}

func (p *Plugin) volumeDir(id string) string   { return filepath.Join(p.cfg.Root, id) }
func (p *Plugin) snapshotDir(id string) string { return filepath.Join(snapshotsDir(p.cfg.Root), id) }

func (p *Plugin) metaFile(k kind, id string) string {
	return filepath.Join(metaDir(p.cfg.Root, k), id+".json")
}

// volume loads a volume: ok is false when id is invalid or its directory
// is missing. A directory without metadata is a volume of capacity 0.
func (p *Plugin) volume(id string) (*volumeMeta, bool, error) {
	if !validID(id) {
		return nil, false, nil
	}
	fi, err := os.Stat(p.volumeDir(id))
	if errors.Is(err, fs.ErrNotExist) {
		return nil, false, nil
	}
	if err != nil {
		return nil, false, err
	}
	if !fi.IsDir() {
		return nil, false, nil
	}
	v := &volumeMeta{ID: id}
	if err := p.readMeta(kindVolume, id, v); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return nil, false, err
	}
	return v, true, nil
}

// snapshot loads a snapshot; ok is false when it does not exist.
func (p *Plugin) snapshot(id string) (*snapshotMeta, bool, error) {
	if !validID(id) {
		return nil, false, nil
	}
	s := &snapshotMeta{}
	err := p.readMeta(kindSnapshot, id, s)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, false, nil
	}
	if err != nil {
		return nil, false, err
	}
	return s, true, nil
}

func (p *Plugin) readMeta(k kind, id string, v any) error {
	b, err := os.ReadFile(p.metaFile(k, id))
	if err != nil {
		return err
	}
	if err := json.Unmarshal(b, v); err != nil {
		return fmt.Errorf("hostpath: %s metadata %s: %w", k, id, err)
	}
	return nil
}

// writeMeta writes metadata atomically (temp file, then rename).
func (p *Plugin) writeMeta(k kind, id string, v any) error {
	b, err := json.Marshal(v)
	if err != nil {
		return err
	}
	tmp := p.metaFile(k, id) + ".tmp"
	if err := os.WriteFile(tmp, b, 0o644); err != nil {
		return err
	}
	return os.Rename(tmp, p.metaFile(k, id))
}

func (p *Plugin) removeMeta(k kind, id string) error {
	err := os.Remove(p.metaFile(k, id))
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	return err
}

// copyTree copies the regular files and directories under src into dst,
// which it creates; other file types are skipped.
func copyTree(src, dst string) error {
	return filepath.WalkDir(src, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, err := filepath.Rel(src, path)
		if err != nil {
			return err
		}
		to := filepath.Join(dst, rel)
		switch {
		case d.IsDir():
			return os.MkdirAll(to, 0o777)
		case d.Type().IsRegular():
			return copyFile(path, to)
		}
		return nil
	})
}

func copyFile(from, to string) error {
	in, err := os.Open(from)
	if err != nil {
		return err
	}
	defer in.Close()
	out, err := os.OpenFile(to, os.O_CREATE|os.O_WRONLY|os.O_TRUNC, 0o666)
	if err != nil {
		return err
	}
	if _, err := io.Copy(out, in); err != nil {
		_ = out.Close()
		return err
	}
	return out.Close()
}

// treeSize is the total size of the regular files under dir.
func treeSize(dir string) (int64, error) {
	var total int64
	err := filepath.WalkDir(dir, func(_ string, d fs.DirEntry, err error) error {
		if err != nil || !d.Type().IsRegular() {
			return err
		}
		fi, err := d.Info()
		if err != nil {
			return err
		}
		total += fi.Size()
		return nil
	})
	return total, err
}
