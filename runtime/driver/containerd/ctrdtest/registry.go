//go:build linux

package ctrdtest

import (
	"bytes"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	ocispec "github.com/opencontainers/image-spec/specs-go/v1"
)

// RegistryPath is Debian's docker-registry (distribution 2.x).
const RegistryPath = "/usr/bin/docker-registry"

// Registry is a local plain-HTTP image registry.
type Registry struct {
	addr string // 127.0.0.1:port
	cmd  *exec.Cmd
	// user and password log in to a registry started with a login.
	user, password string
}

// RegistryUser and RegistryPassword log in to a registry started with a
// login; testHtpasswd is their bcrypt hash (cost 4).
const (
	RegistryUser     = "troupe"
	RegistryPassword = "s3cret"
	testHtpasswd     = "troupe:$2b$04$39cQP9FFrMEl0FzMCBmB1ONA8UjxkqBLh5Es0u7/QHuu3YD.n461G\n"
)

const registryConfig = `version: 0.1
log:
  level: warn
storage:
  filesystem:
    rootdirectory: %s
http:
  addr: %s
`

const registryAuthConfig = `auth:
  htpasswd:
    realm: troupe
    path: %s
`

// StartRegistry runs a registry for tb, storing under a temp dir, and
// stops it when tb ends; with login it demands RegistryUser's login. It
// skips tb without docker-registry (fails instead with CI=true).
func StartRegistry(tb testing.TB, login bool) *Registry {
	tb.Helper()
	RequireTools(tb, RegistryPath)
	r, err := NewRegistry(tb.TempDir(), login)
	require.NoError(tb, err)
	tb.Cleanup(r.Close)
	return r
}

// NewRegistry runs docker-registry on a free loopback port, storing
// under dir, for callers that outlive one test, who must Close it; with
// login it demands RegistryUser's login.
func NewRegistry(dir string, login bool) (*Registry, error) {
	addr, err := FreeAddr()
	if err != nil {
		return nil, err
	}
	cfgPath := filepath.Join(dir, "registry.yml")
	cfg := fmt.Sprintf(registryConfig, filepath.Join(dir, "registry"), addr)
	if login {
		htpasswd := filepath.Join(dir, "htpasswd")
		if err := os.WriteFile(htpasswd, []byte(testHtpasswd), 0o600); err != nil {
			return nil, err
		}
		cfg += fmt.Sprintf(registryAuthConfig, htpasswd)
	}
	if err := os.WriteFile(cfgPath, []byte(cfg), 0o600); err != nil {
		return nil, err
	}
	logf, err := os.Create(filepath.Join(dir, "registry.log"))
	if err != nil {
		return nil, err
	}
	defer logf.Close()
	r := &Registry{addr: addr, cmd: exec.Command(RegistryPath, "serve", cfgPath)}
	if login {
		r.user, r.password = RegistryUser, RegistryPassword
	}
	r.cmd.Stdout, r.cmd.Stderr = logf, logf
	r.cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := r.cmd.Start(); err != nil {
		return nil, err
	}
	err = poll(20*time.Second, func() error {
		resp, err := r.do(http.MethodGet, "http://"+addr+"/v2/", "", nil)
		if err != nil {
			return err
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusOK {
			return fmt.Errorf("GET /v2/: %s", resp.Status)
		}
		return nil
	})
	if err != nil {
		r.Close()
		return nil, fmt.Errorf("ctrdtest: registry on %s did not come up: %w", addr, err)
	}
	return r, nil
}

// Addr is the registry's host:port (on 127.0.0.1), which image
// references start with.
func (r *Registry) Addr() string { return r.addr }

// Close stops the registry.
func (r *Registry) Close() {
	_ = r.cmd.Process.Kill()
	_ = r.cmd.Wait()
}

// Push uploads img's blobs and its manifest as repo:tag through the
// registry's v2 API; the image is then Addr()+"/"+repo+":"+tag.
func (r *Registry) Push(img *Image, repo, tag string) error {
	for _, blob := range []struct {
		desc ocispec.Descriptor
		body []byte
	}{{img.layerDesc, img.layer}, {img.configDesc, img.config}} {
		if err := r.pushBlob(repo, blob.desc, blob.body); err != nil {
			return err
		}
	}
	u := fmt.Sprintf("http://%s/v2/%s/manifests/%s", r.addr, repo, tag)
	return r.put(u, ocispec.MediaTypeImageManifest, img.manifest)
}

func (r *Registry) pushBlob(repo string, desc ocispec.Descriptor, body []byte) error {
	resp, err := r.do(http.MethodPost, fmt.Sprintf("http://%s/v2/%s/blobs/uploads/", r.addr, repo), "", nil)
	if err != nil {
		return err
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusAccepted {
		return fmt.Errorf("starting upload: %s", resp.Status)
	}
	loc, err := resp.Location()
	if err != nil {
		return err
	}
	q := loc.Query()
	q.Set("digest", desc.Digest.String())
	loc.RawQuery = q.Encode()
	return r.put(loc.String(), "application/octet-stream", body)
}

// do sends a request, with the registry's login if it has one.
func (r *Registry) do(method, u, contentType string, body []byte) (*http.Response, error) {
	req, err := http.NewRequest(method, u, bytes.NewReader(body))
	if err != nil {
		return nil, err
	}
	if contentType != "" {
		req.Header.Set("Content-Type", contentType)
	}
	if r.user != "" {
		req.SetBasicAuth(r.user, r.password)
	}
	return httpClient.Do(req)
}

func (r *Registry) put(u, contentType string, body []byte) error {
	resp, err := r.do(http.MethodPut, u, contentType, body)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusCreated {
		msg, _ := io.ReadAll(resp.Body)
		return fmt.Errorf("PUT %s: %s: %s", (&url.URL{Path: u}).Path, resp.Status, msg)
	}
	return nil
}

// httpClient keeps no idle connections, which goleak would see.
var httpClient = &http.Client{Transport: &http.Transport{DisableKeepAlives: true}}

// FreeAddr returns a loopback host:port that nobody listens on now.
func FreeAddr() (string, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", err
	}
	defer l.Close()
	return l.Addr().String(), nil
}
