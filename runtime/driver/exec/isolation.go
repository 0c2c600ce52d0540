package exec

import (
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/troupe-dev/troupe/runtime/driver"
)

// DefaultChrootEnv is Nomad's default chroot_env: the host paths bound,
// read-only, into an isolated task's root (the key is the host path, the
// value where the task sees it). Those that do not exist are skipped.
var DefaultChrootEnv = map[string]string{
	"/bin": "/bin", "/etc": "/etc", "/lib": "/lib", "/lib32": "/lib32", "/lib64": "/lib64",
	"/run/resolvconf": "/run/resolvconf", "/sbin": "/sbin", "/usr": "/usr",
}

// DefaultUserDenylist is Nomad's default user.denylist: the users an exec
// task may not ask for.
var DefaultUserDenylist = []string{"root", "Administrator"}

// defaultCaps is Nomad's exec driver default allow_caps: the bounding set
// of an isolated task (what a task running as root keeps).
var defaultCaps = []string{"audit_write", "chown", "dac_override", "fowner", "fsetid", "kill", "mknod",
	"net_bind_service", "setfcap", "setgid", "setpcap", "setuid", "sys_chroot"}

// defaultTaskUser runs an isolated task that names no user.
const defaultTaskUser = "nobody"

// Directories of an isolated task's dir (Nomad's layout).
const (
	localDirName   = "local"
	secretsDirName = "secrets"
	tmpDirName     = "tmp"
	rootDirName    = "root" // in the state dir: the mount point of the task's root
)

// isolationSpec is how the executor builds an isolated task's root.
type isolationSpec struct {
	AllocDir  string
	ChrootEnv map[string]string // host path -> path in the root
	Mounts    []driver.Mount
	Caps      []string
}

// isolation turns a task's Isolation into the spec's, refusing a user on
// the denylist; a task that names no user runs as nobody. Without root
// the task cannot be isolated: it runs in the host's filesystem, and the
// variables and args that name its directories are turned into host
// paths.
func (d *Driver) isolation(cfg *driver.TaskConfig, spec *executorSpec) error {
	iso := cfg.Isolation
	if iso == nil {
		return nil
	}
	if slices.Contains(d.cfg.userDenylist(), spec.User) {
		return fmt.Errorf("%w: %s: running as user %q is not allowed on this client (user.denylist)",
			driver.ErrInvalidConfig, cfg.ID, spec.User)
	}
	for _, m := range iso.Mounts {
		if !filepath.IsAbs(m.Source) || !filepath.IsAbs(m.Destination) {
			return fmt.Errorf("%w: %s: mount %q -> %q: paths must be absolute", driver.ErrInvalidConfig, cfg.ID, m.Source, m.Destination)
		}
	}
	if os.Geteuid() != 0 {
		d.log.Warn("not root: running the task without isolation", "task", cfg.ID)
		spec.Env, spec.Args = hostPaths(spec.Env, spec.Args, iso.AllocDir, cfg.TaskDir)
		return nil
	}
	if spec.User == "" {
		spec.User = defaultTaskUser
	}
	spec.Isolation = &isolationSpec{AllocDir: iso.AllocDir, ChrootEnv: d.cfg.chrootEnv(),
		Mounts: slices.Clone(iso.Mounts), Caps: defaultCaps}
	return nil
}

// chrootEnv is the configured chroot_env, or Nomad's default.
func (c *Config) chrootEnv() map[string]string {
	if c.ChrootEnv == nil {
		return maps.Clone(DefaultChrootEnv)
	}
	return maps.Clone(c.ChrootEnv)
}

// userDenylist is the configured denylist, or Nomad's default.
func (c *Config) userDenylist() []string {
	if c.UserDenylist == nil {
		return DefaultUserDenylist
	}
	return c.UserDenylist
}

// hostPaths rewrites values that name an isolated task's directories
// (/alloc, /local, /secrets and beneath) into the host's paths: the
// values of env (KEY=VALUE) and the args.
func hostPaths(env, args []string, allocDir, taskDir string) ([]string, []string) {
	dirs := []struct{ task, host string }{
		{driver.TaskAllocDir, allocDir},
		{driver.TaskLocalDir, filepath.Join(taskDir, localDirName)},
		{driver.TaskSecretsDir, filepath.Join(taskDir, secretsDirName)},
	}
	host := func(v string) string {
		for _, d := range dirs {
			if v == d.task || strings.HasPrefix(v, d.task+"/") {
				return d.host + strings.TrimPrefix(v, d.task)
			}
		}
		return v
	}
	outEnv := slices.Clone(env)
	for i, kv := range outEnv {
		k, v, _ := strings.Cut(kv, "=")
		outEnv[i] = k + "=" + host(v)
	}
	outArgs := slices.Clone(args)
	for i, a := range outArgs {
		outArgs[i] = host(a)
	}
	return outEnv, outArgs
}
