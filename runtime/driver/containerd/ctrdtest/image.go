package ctrdtest

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"encoding/json"
	"maps"
	"os"
	"path/filepath"
	goruntime "runtime"
	"slices"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/opencontainers/go-digest"
	specsv1 "github.com/opencontainers/image-spec/specs-go"
	ocispec "github.com/opencontainers/image-spec/specs-go/v1"
)

// BusyboxPath is the static busybox the test image is made of.
const BusyboxPath = "/usr/bin/busybox"

// BusyboxImage is the name BusyboxArchive gives its image.
const BusyboxImage = "docker.io/troupe/busybox:test"

// busyboxApplets get a symlink in the image's /bin.
var busyboxApplets = []string{"sh", "sleep", "echo", "cat", "ls", "id", "test", "true", "false", "touch", "wc", "head", "readlink"}

// Image is a one-layer OCI image of busybox: its blobs and their
// descriptors.
type Image struct {
	layer, config, manifest       []byte
	layerDesc, configDesc, mfDesc ocispec.Descriptor
}

// BuildImage makes a one-layer image of busybox for the host's platform,
// with extra files (path in the image without its leading "/": content).
// Its /bin holds busybox and links for common applets (sh, sleep, echo,
// cat, ...); PATH is /bin and the command is sh.
func BuildImage(extra map[string]string) (*Image, error) {
	layer, diffID, err := busyboxLayer(extra)
	if err != nil {
		return nil, err
	}
	img := &Image{layer: layer}
	img.layerDesc = descriptor(ocispec.MediaTypeImageLayerGzip, layer)
	cfg := ocispec.Image{
		Platform: ocispec.Platform{Architecture: goruntime.GOARCH, OS: "linux"},
		Config:   ocispec.ImageConfig{Env: []string{"PATH=/bin"}, Cmd: []string{"sh"}, WorkingDir: "/"},
		RootFS:   ocispec.RootFS{Type: "layers", DiffIDs: []digest.Digest{diffID}},
	}
	if img.config, err = json.Marshal(cfg); err != nil {
		return nil, err
	}
	img.configDesc = descriptor(ocispec.MediaTypeImageConfig, img.config)
	mf := ocispec.Manifest{Versioned: specsv1.Versioned{SchemaVersion: 2}, MediaType: ocispec.MediaTypeImageManifest,
		Config: img.configDesc, Layers: []ocispec.Descriptor{img.layerDesc}}
	if img.manifest, err = json.Marshal(mf); err != nil {
		return nil, err
	}
	img.mfDesc = descriptor(ocispec.MediaTypeImageManifest, img.manifest)
	return img, nil
}

func descriptor(mediaType string, blob []byte) ocispec.Descriptor {
	return ocispec.Descriptor{MediaType: mediaType, Digest: digest.FromBytes(blob), Size: int64(len(blob))}
}

// busyboxLayer is a gzipped tar of bin/busybox, its applet links, a
// passwd file and the usual empty dirs; it returns the uncompressed
// tar's digest too (the diff id).
func busyboxLayer(extra map[string]string) ([]byte, digest.Digest, error) {
	bin, err := os.ReadFile(BusyboxPath)
	if err != nil {
		return nil, "", err
	}
	var raw bytes.Buffer
	tw := tar.NewWriter(&raw)
	now := time.Unix(1700000000, 0)
	add := func(h *tar.Header, body []byte) error {
		h.ModTime, h.Format = now, tar.FormatPAX
		if err := tw.WriteHeader(h); err != nil {
			return err
		}
		_, err := tw.Write(body)
		return err
	}
	dirs := map[string]int64{"bin/": 0o755, "etc/": 0o755, "tmp/": 0o1777, "proc/": 0o555,
		"sys/": 0o555, "dev/": 0o755, "root/": 0o700}
	for _, name := range []string{"bin/", "etc/", "tmp/", "proc/", "sys/", "dev/", "root/"} {
		if err := add(&tar.Header{Typeflag: tar.TypeDir, Name: name, Mode: dirs[name]}, nil); err != nil {
			return nil, "", err
		}
	}
	files := []struct {
		name string
		mode int64
		body []byte
	}{
		{"bin/busybox", 0o755, bin},
		{"etc/passwd", 0o644, []byte("root:x:0:0:root:/root:/bin/sh\nnobody:x:65534:65534:nobody:/:/bin/sh\n")},
		{"etc/group", 0o644, []byte("root:x:0:\nnogroup:x:65534:\n")},
	}
	for _, name := range slices.Sorted(maps.Keys(extra)) {
		files = append(files, struct {
			name string
			mode int64
			body []byte
		}{name, 0o644, []byte(extra[name])})
	}
	for _, f := range files {
		h := &tar.Header{Typeflag: tar.TypeReg, Name: f.name, Mode: f.mode, Size: int64(len(f.body))}
		if err := add(h, f.body); err != nil {
			return nil, "", err
		}
	}
	for _, applet := range busyboxApplets {
		h := &tar.Header{Typeflag: tar.TypeSymlink, Name: "bin/" + applet, Linkname: "busybox", Mode: 0o777}
		if err := add(h, nil); err != nil {
			return nil, "", err
		}
	}
	if err := tw.Close(); err != nil {
		return nil, "", err
	}
	var gz bytes.Buffer
	zw := gzip.NewWriter(&gz)
	if _, err := zw.Write(raw.Bytes()); err != nil {
		return nil, "", err
	}
	if err := zw.Close(); err != nil {
		return nil, "", err
	}
	return gz.Bytes(), digest.FromBytes(raw.Bytes()), nil
}

// Digest is the digest of img's manifest, which a registry or containerd
// reports as the image's target.
func (img *Image) Digest() digest.Digest { return img.mfDesc.Digest }

// BusyboxArchive writes the busybox image, named BusyboxImage, as an OCI
// archive into dir and returns its path (for "oci-archive://" + path) and
// the image's name. It skips tb without busybox (fails with CI=true).
func BusyboxArchive(tb testing.TB, dir string) (path, imageName string) {
	tb.Helper()
	RequireTools(tb, BusyboxPath)
	img, err := BuildImage(nil)
	require.NoError(tb, err)
	path = filepath.Join(dir, "busybox.tar")
	require.NoError(tb, img.WriteArchive(path, BusyboxImage))
	return path, BusyboxImage
}

// WriteArchive writes img as an OCI image layout tar whose index names
// the manifest name (an empty name leaves it unnamed).
func (img *Image) WriteArchive(path, name string) error {
	mf := img.mfDesc
	if name != "" {
		mf.Annotations = map[string]string{"io.containerd.image.name": name, ocispec.AnnotationRefName: "test"}
	}
	index, err := json.Marshal(ocispec.Index{Versioned: specsv1.Versioned{SchemaVersion: 2},
		MediaType: ocispec.MediaTypeImageIndex, Manifests: []ocispec.Descriptor{mf}})
	if err != nil {
		return err
	}
	layout, err := json.Marshal(ocispec.ImageLayout{Version: ocispec.ImageLayoutVersion})
	if err != nil {
		return err
	}
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	defer f.Close()
	tw := tar.NewWriter(f)
	entries := []struct {
		name string
		body []byte
	}{
		{ocispec.ImageLayoutFile, layout},
		{ocispec.ImageIndexFile, index},
		{"blobs/sha256/" + img.layerDesc.Digest.Encoded(), img.layer},
		{"blobs/sha256/" + img.configDesc.Digest.Encoded(), img.config},
		{"blobs/sha256/" + img.mfDesc.Digest.Encoded(), img.manifest},
	}
	for _, e := range entries {
		h := &tar.Header{Typeflag: tar.TypeReg, Name: e.name, Mode: 0o644, Size: int64(len(e.body))}
		if err := tw.WriteHeader(h); err != nil {
			return err
		}
		if _, err := tw.Write(e.body); err != nil {
			return err
		}
	}
	if err := tw.Close(); err != nil {
		return err
	}
	return f.Close()
}
