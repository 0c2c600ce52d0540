package containerd

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"os"

	"github.com/containerd/containerd/v2/client"
	"github.com/containerd/containerd/v2/core/images"
	"github.com/containerd/containerd/v2/core/remotes"
	"github.com/containerd/containerd/v2/core/remotes/docker"
	"github.com/containerd/errdefs"
)

// image returns the task's image, unpacked into the driver's snapshotter:
// imported from its archive, or pulled unless it is present already (or
// force_pull is set).
func (d *Driver) image(ctx context.Context, cl *client.Client, s *taskSpec) (client.Image, error) {
	ctx, cancel := context.WithTimeout(ctx, d.cfg.PullTimeout)
	defer cancel()
	if s.ArchivePath != "" {
		return d.importArchive(ctx, cl, s)
	}
	if !s.ForcePull {
		img, err := cl.GetImage(ctx, s.Image)
		switch {
		case err == nil:
			if err := d.unpack(ctx, img); err != nil {
				return nil, fmt.Errorf("%w: %q: unpacking: %w", ErrImagePull, s.Image, err)
			}
			return img, nil
		case !errdefs.IsNotFound(err):
			return nil, fmt.Errorf("%w: %q: looking up the image: %w", ErrImagePull, s.Image, err)
		}
	}
	d.log.Info("pulling image", "image", s.Image)
	res, done := resolver(s)
	defer done()
	img, err := cl.Pull(ctx, s.Image, client.WithPullUnpack,
		client.WithPullSnapshotter(d.cfg.Snapshotter), client.WithResolver(res))
	if err != nil {
		return nil, fmt.Errorf("%w: %q: %w", ErrImagePull, s.Image, err)
	}
	return img, nil
}

// resolver talks plain HTTP to loopback registries, or to every registry
// when the task says "insecure", and logs in with the task's "auth". Call
// done after the pull: it closes the resolver's idle connections.
func resolver(s *taskSpec) (res remotes.Resolver, done func()) {
	plain := docker.MatchLocalhost
	if s.Insecure {
		plain = docker.MatchAllHosts
	}
	transport := docker.DefaultHTTPTransport(nil)
	opts := []docker.RegistryOpt{docker.WithPlainHTTP(plain), docker.WithClient(&http.Client{Transport: transport})}
	if s.Auth != nil {
		a := *s.Auth
		opts = append(opts, docker.WithAuthorizer(docker.NewDockerAuthorizer(
			docker.WithAuthCreds(func(string) (string, string, error) { return a.Username, a.Password, nil }))))
	}
	res = docker.NewResolver(docker.ResolverOptions{Hosts: docker.ConfigureDefaultRegistries(opts...)})
	return res, transport.CloseIdleConnections
}

// importArchive imports an OCI image archive once per version of the file
// (per driver) and returns its image: the one "image_name" names, else the
// one the archive's index names.
func (d *Driver) importArchive(ctx context.Context, cl *client.Client, s *taskSpec) (client.Image, error) {
	fail := func(err error) (client.Image, error) {
		return nil, fmt.Errorf("%w: %s: %w", ErrImageImport, s.ArchivePath, err)
	}
	f, err := os.Open(s.ArchivePath)
	if err != nil {
		return fail(err)
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return fail(err)
	}
	key := archiveKey{Path: s.ArchivePath, Size: fi.Size(), ModTime: fi.ModTime().UnixNano()}
	if name := d.importedName(key, s.ImageName); name != "" {
		if img, err := cl.GetImage(ctx, name); err == nil {
			if err := d.unpack(ctx, img); err != nil {
				return fail(fmt.Errorf("unpacking: %w", err))
			}
			return img, nil
		}
	}
	d.importMu.Lock() // one import at a time: they are rare and may share blobs
	defer d.importMu.Unlock()
	var opts []client.ImportOpt
	if s.ImageName != "" {
		opts = append(opts, client.WithIndexName(s.ImageName))
	}
	imgs, err := cl.Import(ctx, f, opts...)
	if err != nil {
		return fail(err)
	}
	rec, err := pickImported(imgs, s.ImageName)
	if err != nil {
		return fail(err)
	}
	img := client.NewImage(cl, rec)
	if err := d.unpack(ctx, img); err != nil {
		return fail(fmt.Errorf("unpacking: %w", err))
	}
	d.mu.Lock()
	d.archives[key] = rec.Name
	d.mu.Unlock()
	d.log.Info("imported image", "archive", s.ArchivePath, "image", rec.Name)
	return img, nil
}

// importedName is the image an earlier import of key made, if it is the
// one wanted.
func (d *Driver) importedName(key archiveKey, want string) string {
	d.mu.Lock()
	defer d.mu.Unlock()
	name := d.archives[key]
	if want != "" && name != want {
		return ""
	}
	return name
}

// pickImported chooses the imported image: the one named want, else the
// first that the archive named.
func pickImported(imgs []images.Image, want string) (images.Image, error) {
	for _, img := range imgs {
		if want == "" || img.Name == want {
			return img, nil
		}
	}
	if want != "" {
		return images.Image{}, fmt.Errorf("no image named %q was imported", want)
	}
	return images.Image{}, errors.New(`the archive names no image: set "image_name"`)
}

// unpack makes sure img's layers are in the driver's snapshotter.
func (d *Driver) unpack(ctx context.Context, img client.Image) error {
	ok, err := img.IsUnpacked(ctx, d.cfg.Snapshotter)
	if err != nil || ok {
		return err
	}
	return img.Unpack(ctx, d.cfg.Snapshotter)
}
