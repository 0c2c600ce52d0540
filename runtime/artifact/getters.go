package artifact

import (
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os/exec"
	"path/filepath"

	cleanhttp "github.com/hashicorp/go-cleanhttp"
	getter "github.com/hashicorp/go-getter"

	"github.com/troupe-dev/troupe/runtime/safepath"
)

// getters are the ones an artifact may use: http(s), local files beneath
// allocDir, and git when the host has it. Each fetch gets its own (the
// headers differ).
func getters(lim Limits, headers map[string]string, allocDir string) map[string]getter.Getter {
	h := make(http.Header, len(headers))
	for k, v := range headers {
		h.Set(k, v)
	}
	client := cleanhttp.DefaultClient()
	client.Transport = &limitTransport{base: client.Transport, max: lim.HTTPMaxBytes}
	web := &getter.HttpGetter{
		Client: client, Header: h,
		ReadTimeout: lim.HTTPReadTimeout, HeadFirstTimeout: lim.HTTPReadTimeout,
		XTerraformGetDisabled: true,
	}
	gs := map[string]getter.Getter{
		"http": web, "https": web,
		"file": &localGetter{FileGetter: &getter.FileGetter{Copy: true}, root: allocDir},
	}
	if _, err := exec.LookPath("git"); err == nil {
		gs["git"] = &gitGetter{GitGetter: &getter.GitGetter{Timeout: lim.GitTimeout}}
	} else {
		gs["git"] = noGit{}
	}
	return gs
}

// localGetter copies local files and directories, only from beneath
// root (symlinks resolved), never by linking.
type localGetter struct {
	*getter.FileGetter
	root string
}

func (g *localGetter) check(u *url.URL) error {
	p := u.Path
	if u.RawPath != "" {
		p = u.RawPath
	}
	if g.root == "" {
		return fmt.Errorf("%w: %s", ErrSourceOutside, p)
	}
	root, err := filepath.EvalSymlinks(g.root)
	if err != nil {
		return fmt.Errorf("%w: %s", ErrSourceOutside, p)
	}
	real, err := filepath.EvalSymlinks(p)
	if err != nil {
		return err // does not exist: go-getter's own error would say less
	}
	if !safepath.Within(root, real) {
		return fmt.Errorf("%w: %s", ErrSourceOutside, p)
	}
	return nil
}

// ClientMode implements getter.Getter.
func (g *localGetter) ClientMode(u *url.URL) (getter.ClientMode, error) {
	if err := g.check(u); err != nil {
		return 0, err
	}
	return g.FileGetter.ClientMode(u)
}

// Get implements getter.Getter.
func (g *localGetter) Get(dst string, u *url.URL) error {
	if err := g.check(u); err != nil {
		return err
	}
	return g.FileGetter.Get(dst, u)
}

// GetFile implements getter.Getter.
func (g *localGetter) GetFile(dst string, u *url.URL) error {
	if err := g.check(u); err != nil {
		return err
	}
	return g.FileGetter.GetFile(dst, u)
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

// ClientMode implements getter.Getter.
func (g *gitGetter) ClientMode(u *url.URL) (getter.ClientMode, error) {
	if err := g.check(u); err != nil {
		return 0, err
	}
	return g.GitGetter.ClientMode(u)
}

// Get implements getter.Getter.
func (g *gitGetter) Get(dst string, u *url.URL) error {
	if err := g.check(u); err != nil {
		return err
	}
	return g.GitGetter.Get(dst, u)
}

// GetFile implements getter.Getter.
func (g *gitGetter) GetFile(dst string, u *url.URL) error {
	if err := g.check(u); err != nil {
		return err
	}
	return g.GitGetter.GetFile(dst, u)
}

// noGit stands for git on a host without it.
type noGit struct{}

var errNoGit = fmt.Errorf("%w: git is not installed on this client", ErrUnsupportedSource)

func (noGit) ClientMode(*url.URL) (getter.ClientMode, error) { return 0, errNoGit }
func (noGit) Get(string, *url.URL) error                     { return errNoGit }
func (noGit) GetFile(string, *url.URL) error                 { return errNoGit }
func (noGit) SetClient(*getter.Client)                       {}

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
