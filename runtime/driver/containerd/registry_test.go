//go:build linux

package containerd

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
	"time"

	ocispec "github.com/opencontainers/image-spec/specs-go/v1"
)

// registryPath is Debian's docker-registry (distribution 2.x).
const registryPath = "/usr/bin/docker-registry"

// registry is a local plain-HTTP image registry.
type registry struct {
	addr string // 127.0.0.1:port
	cmd  *exec.Cmd
	// user and password log in to a registry started with a login.
	user, password string
}

// testLogin is a registry login; its bcrypt hash (cost 4) is testHtpasswd.
const (
	testUser     = "troupe"
	testPassword = "s3cret"
	testHtpasswd = "troupe:$2b$04$39cQP9FFrMEl0FzMCBmB1ONA8UjxkqBLh5Es0u7/QHuu3YD.n461G\n"
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

// startRegistry runs docker-registry on a free loopback port, storing
// under dir; with login it demands testUser's login.
func startRegistry(dir string, login bool) (*registry, error) {
	addr, err := freeAddr()
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
	r := &registry{addr: addr, cmd: exec.Command(registryPath, "serve", cfgPath)}
	if login {
		r.user, r.password = testUser, testPassword
	}
	r.cmd.Stdout, r.cmd.Stderr = logf, logf
	r.cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := r.cmd.Start(); err != nil {
		return nil, err
	}
	deadline := time.Now().Add(20 * time.Second)
	for {
		resp, err := r.do(http.MethodGet, "http://"+addr+"/v2/", "", nil)
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return r, nil
			}
		}
		if time.Now().After(deadline) {
			r.stop()
			return nil, fmt.Errorf("registry on %s did not come up: %v", addr, err)
		}
		<-time.After(50 * time.Millisecond)
	}
}

func (r *registry) stop() {
	_ = r.cmd.Process.Kill()
	_ = r.cmd.Wait()
}

// push uploads img's blobs and its manifest as repo:tag through the
// registry's v2 API.
func (r *registry) push(img *testImage, repo, tag string) error {
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

func (r *registry) pushBlob(repo string, desc ocispec.Descriptor, body []byte) error {
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
func (r *registry) do(method, u, contentType string, body []byte) (*http.Response, error) {
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

func (r *registry) put(u, contentType string, body []byte) error {
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

// freeAddr returns a loopback address with a port nobody listens on now.
func freeAddr() (string, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", err
	}
	defer l.Close()
	return l.Addr().String(), nil
}
