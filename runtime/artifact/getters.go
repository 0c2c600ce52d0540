package artifact

import (
	"context"
	"crypto/tls"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"

	cleanhttp "github.com/hashicorp/go-cleanhttp"
	getter "github.com/hashicorp/go-getter/v2"

	"github.com/troupe-dev/troupe/runtime/safepath"
)

// getters are the ones an artifact may use, in the order go-getter v2
// tries them: git when the host has it, http(s), and local files beneath
// allocDir. Each fetch gets its own (the headers differ).
func getters(lim Limits, headers map[string]string, allocDir string, insecure bool) []getter.Getter {
	h := make(http.Header, len(headers))
	for k, v := range headers {
		h.Set(k, v)
	}
	client := cleanhttp.DefaultClient()
	if insecure {
		if tr, ok := client.Transport.(*http.Transport); ok {
			tr.TLSClientConfig = &tls.Config{InsecureSkipVerify: true} //nolint:gosec // Nomad's insecure option
		}
	}
	client.Transport = &limitTransport{base: client.Transport, max: lim.HTTPMaxBytes}
	web := &getter.HttpGetter{
		Client: client, Header: h,
		ReadTimeout: lim.HTTPReadTimeout, HeadFirstTimeout: lim.HTTPReadTimeout,
		XTerraformGetDisabled: true,
	}
	git := &getter.GitGetter{Timeout: lim.GitTimeout, Detectors: gitDetectors}
	var g getter.Getter = noGit{GitGetter: git}
	if _, err := exec.LookPath("git"); err == nil {
		g = &gitGetter{GitGetter: git}
	}
	return []getter.Getter{g, web, &localGetter{root: allocDir}}
}

// gitDetectors turn short sources into git URLs: github.com/...,
// gitlab.com/... and git@host:path (Bitbucket is left out: it asks
// Bitbucket's API).
var gitDetectors = []getter.Detector{new(getter.GitHubDetector), new(getter.GitLabDetector), new(getter.GitDetector)}

// claimGit detects a git source with g and, when it is one, marks the
// request as forced to git, so that no other getter tries it when git
// fails (go-getter v2 tries every getter that detects a source).
func claimGit(g *getter.GitGetter, req *getter.Request) (bool, error) {
	ok, err := g.Detect(req)
	if ok && err == nil && req.Forced == "" {
		req.Forced = "git"
	}
	return ok, err
}

// localGetter copies local files and directories, only from beneath
// root (symlinks resolved), never by linking.
type localGetter struct {
	getter.FileGetter
	root string
}

func (g *localGetter) check(u *url.URL) (string, error) {
	p := u.Path
	if u.RawPath != "" {
		p = u.RawPath
	}
	if g.root == "" {
		return "", fmt.Errorf("%w: %s", ErrSourceOutside, p)
	}
	root, err := filepath.EvalSymlinks(g.root)
	if err != nil {
		return "", fmt.Errorf("%w: %s", ErrSourceOutside, p)
	}
	real, err := filepath.EvalSymlinks(p)
	if err != nil {
		return "", err // does not exist: go-getter's own error would say less
	}
	if !safepath.Within(root, real) {
		return "", fmt.Errorf("%w: %s", ErrSourceOutside, p)
	}
	return real, nil
}

// Mode implements getter.Getter.
func (g *localGetter) Mode(ctx context.Context, u *url.URL) (getter.Mode, error) {
	if _, err := g.check(u); err != nil {
		return 0, err
	}
	return g.FileGetter.Mode(ctx, u)
}

// Get implements getter.Getter: go-getter v2 links a directory, so the
// copy is ours, through an os.Root of the source (a link inside it
// cannot lead out).
func (g *localGetter) Get(_ context.Context, req *getter.Request) error {
	real, err := g.check(req.URL())
	if err != nil {
		return err
	}
	src, err := os.OpenRoot(real)
	if err != nil {
		return err
	}
	defer src.Close()
	return os.CopyFS(req.Dst, src.FS())
}

// GetFile implements getter.Getter.
func (g *localGetter) GetFile(ctx context.Context, req *getter.Request) error {
	if _, err := g.check(req.URL()); err != nil {
		return err
	}
	req.Copy = true
	return g.FileGetter.GetFile(ctx, req)
}

// gitGetter clones over the network only: a file:// repository would
// read the host's files.
type gitGetter struct{ *getter.GitGetter }

func (g *gitGetter) check(u *url.URL) error {
	if u.Scheme == "file" || u.Scheme == "" {
		return fmt.Errorf("%w: git from the local file system", ErrUnsupportedSource)
	}
	return nil
}

// Detect implements getter.Getter.
func (g *gitGetter) Detect(req *getter.Request) (bool, error) { return claimGit(g.GitGetter, req) }

// Get implements getter.Getter.
func (g *gitGetter) Get(ctx context.Context, req *getter.Request) error {
	if err := g.check(req.URL()); err != nil {
		return err
	}
	return g.GitGetter.Get(ctx, req)
}

// GetFile implements getter.Getter.
func (g *gitGetter) GetFile(ctx context.Context, req *getter.Request) error {
	if err := g.check(req.URL()); err != nil {
		return err
	}
	return g.GitGetter.GetFile(ctx, req)
}

// noGit stands for git on a host without it: it detects git sources as
// git does, and refuses them.
type noGit struct{ *getter.GitGetter }

var errNoGit = fmt.Errorf("%w: git is not installed on this client", ErrUnsupportedSource)

// Detect implements getter.Getter.
func (n noGit) Detect(req *getter.Request) (bool, error) { return claimGit(n.GitGetter, req) }

// Mode implements getter.Getter.
func (noGit) Mode(context.Context, *url.URL) (getter.Mode, error) { return 0, errNoGit }

// Get implements getter.Getter.
func (noGit) Get(context.Context, *getter.Request) error { return errNoGit }

// GetFile implements getter.Getter.
func (noGit) GetFile(context.Context, *getter.Request) error { return errNoGit }

var (
	_ getter.Getter = (*localGetter)(nil)
	_ getter.Getter = (*gitGetter)(nil)
	_ getter.Getter = noGit{}
)

// limitTransport fails a GET whose body is larger than max (go-getter's
// own MaxBytes cuts the body short without an error).
type limitTransport struct {
	base http.RoundTripper
	max  int64
}

// RoundTrip implements http.RoundTripper.
func (t *limitTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	resp, err := t.base.RoundTrip(r)
	if err != nil || r.Method != http.MethodGet {
		return resp, err
	}
	if resp.ContentLength > t.max {
		resp.Body.Close()
		return nil, fmt.Errorf("%w: %d bytes, the limit is %d", ErrTooLarge, resp.ContentLength, t.max)
	}
	resp.Body = &limitedBody{ReadCloser: resp.Body, left: t.max, max: t.max}
	return resp, nil
}

// limitedBody reads at most max bytes, and fails when there are more.
type limitedBody struct {
	io.ReadCloser
	left, max int64
}

func (b *limitedBody) Read(p []byte) (int, error) {
	if b.left <= 0 {
		var one [1]byte
		n, err := b.ReadCloser.Read(one[:])
		if n > 0 || err == nil {
			return 0, fmt.Errorf("%w: more than %d bytes", ErrTooLarge, b.max)
		}
		return 0, err
	}
	if int64(len(p)) > b.left {
		p = p[:b.left]
	}
	n, err := b.ReadCloser.Read(p)
	b.left -= int64(n)
	return n, err
}
