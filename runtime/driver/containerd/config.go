package containerd

import (
	"fmt"
	"path/filepath"
	"slices"
	"sort"
	"strings"

	"github.com/distribution/reference"
	specs "github.com/opencontainers/runtime-spec/specs-go"

	"github.com/troupe-dev/troupe/runtime/driver"
)

// ArchiveScheme prefixes an image that is imported from an OCI image
// archive on the host instead of pulled: "oci-archive:///srv/img.tar".
const ArchiveScheme = "oci-archive://"

// Network modes for the "network_mode" key.
const (
	NetworkHost = "host" // share the host's network namespace (default)
	NetworkNone = "none" // a private namespace with only loopback
)

// knownKeys are the task config keys the driver reads; others are refused.
var knownKeys = []string{"image", "image_name", "command", "args", "work_dir", "mounts",
	"volume_mounts", "devices", "privileged", "netns_path", "network_mode", "insecure",
	"force_pull", "auth"}

// taskSpec is a task's driver config, checked.
type taskSpec struct {
	// Image is a normalised registry reference, or ArchivePath is set.
	Image       string
	ArchivePath string
	// ImageName names an imported archive's image when it names none.
	ImageName   string
	Command     string
	Args        []string
	WorkDir     string
	Mounts      []specs.Mount
	Devices     []device
	Privileged  bool
	NetnsPath   string
	NetworkMode string
	Insecure    bool
	ForcePull   bool
	Auth        *auth
}

// device is a host device node made available in the container.
type device struct {
	Path          string
	ContainerPath string
	Permissions   string
}

// auth is a registry login.
type auth struct {
	Username string
	Password string
}

// parseTaskSpec checks cfg and reads its driver config. Every problem is a
// wrapped driver.ErrInvalidConfig naming the key.
func parseTaskSpec(cfg *driver.TaskConfig) (*taskSpec, error) {
	if cfg == nil || cfg.ID == "" {
		return nil, fmt.Errorf("%w: a task id is required", driver.ErrInvalidConfig)
	}
	s, err := readTaskSpec(cfg)
	if err != nil {
		return nil, fmt.Errorf("%w: %s: %w", driver.ErrInvalidConfig, cfg.ID, err)
	}
	return s, nil
}

func readTaskSpec(cfg *driver.TaskConfig) (*taskSpec, error) {
	m := cfg.Config
	for k := range m {
		if !slices.Contains(knownKeys, k) {
			return nil, fmt.Errorf("unknown key %q (known: %s)", k, strings.Join(knownKeys, ", "))
		}
	}
	s := &taskSpec{}
	var err error
	r := reader{m: m}
	image := r.str("image")
	s.ImageName = r.str("image_name")
	s.Command = r.str("command")
	s.Args = r.strs("args")
	s.WorkDir = r.str("work_dir")
	s.Privileged = r.boolean("privileged")
	s.NetnsPath = r.str("netns_path")
	s.NetworkMode = r.str("network_mode")
	s.Insecure = r.boolean("insecure")
	s.ForcePull = r.boolean("force_pull")
	if r.err != nil {
		return nil, r.err
	}
	if s.Image, s.ArchivePath, err = parseImage(image, cfg.TaskDir); err != nil {
		return nil, err
	}
	if s.WorkDir != "" && !filepath.IsAbs(s.WorkDir) {
		return nil, fmt.Errorf("\"work_dir\" %q is not an absolute path", s.WorkDir)
	}
	if err := s.readNetwork(); err != nil {
		return nil, err
	}
	for _, key := range []string{"mounts", "volume_mounts"} {
		ms, err := parseMounts(key, m[key])
		if err != nil {
			return nil, err
		}
		s.Mounts = append(s.Mounts, ms...)
	}
	if s.Devices, err = parseDevices(m["devices"]); err != nil {
		return nil, err
	}
	if s.Auth, err = parseAuth(m["auth"]); err != nil {
		return nil, err
	}
	return s, nil
}

// parseImage normalises a registry reference ("busybox" is
// "docker.io/library/busybox:latest") or returns an archive's absolute
// path (a relative one is relative to the task dir).
func parseImage(image, taskDir string) (ref, archive string, err error) {
	if image == "" {
		return "", "", fmt.Errorf("\"image\" is required")
	}
	if path, ok := strings.CutPrefix(image, ArchiveScheme); ok {
		if path == "" {
			return "", "", fmt.Errorf("\"image\" %q names no archive file", image)
		}
		if !filepath.IsAbs(path) {
			if taskDir == "" {
				return "", "", fmt.Errorf("\"image\" %q is relative and the task has no dir", image)
			}
			path = filepath.Join(taskDir, path)
		}
		return "", filepath.Clean(path), nil
	}
	named, err := reference.ParseDockerRef(image)
	if err != nil {
		return "", "", fmt.Errorf("\"image\" %q: %w", image, err)
	}
	return named.String(), "", nil
}

func (s *taskSpec) readNetwork() error {
	switch {
	case s.NetnsPath != "" && !filepath.IsAbs(s.NetnsPath):
		return fmt.Errorf("\"netns_path\" %q is not an absolute path", s.NetnsPath)
	case s.NetnsPath != "" && s.NetworkMode != "":
		return fmt.Errorf("\"netns_path\" and \"network_mode\" exclude each other")
	case s.NetworkMode == "" && s.NetnsPath == "":
		s.NetworkMode = NetworkHost
	case s.NetworkMode != "" && s.NetworkMode != NetworkHost && s.NetworkMode != NetworkNone:
		return fmt.Errorf("\"network_mode\" %q is not %q or %q", s.NetworkMode, NetworkHost, NetworkNone)
	}
	return nil
}

// parseMounts reads a list of mounts: {source, target, readonly} binds a
// host path; {type, source, target, options} is any mount.
func parseMounts(key string, v any) ([]specs.Mount, error) {
	items, err := objects(v)
	if err != nil {
		return nil, fmt.Errorf("%q: %w", key, err)
	}
	out := make([]specs.Mount, 0, len(items))
	for i, item := range items {
		mnt, err := parseMount(item)
		if err != nil {
			return nil, fmt.Errorf("%q[%d]: %w", key, i, err)
		}
		out = append(out, mnt)
	}
	return out, nil
}

func parseMount(m map[string]any) (specs.Mount, error) {
	r := reader{m: m}
	mnt := specs.Mount{Type: r.str("type"), Source: r.str("source"), Destination: r.str("target"),
		Options: r.strs("options")}
	readonly := r.boolean("readonly")
	if mnt.Destination == "" {
		mnt.Destination = r.str("destination")
	}
	if r.err != nil {
		return mnt, r.err
	}
	if mnt.Type == "" {
		mnt.Type = "bind"
	}
	if !filepath.IsAbs(mnt.Destination) {
		return mnt, fmt.Errorf("target %q is not an absolute path", mnt.Destination)
	}
	if mnt.Type == "bind" {
		if !filepath.IsAbs(mnt.Source) {
			return mnt, fmt.Errorf("bind source %q is not an absolute path", mnt.Source)
		}
		if !slices.Contains(mnt.Options, "bind") && !slices.Contains(mnt.Options, "rbind") {
			mnt.Options = append([]string{"rbind"}, mnt.Options...)
		}
	}
	if readonly && !slices.Contains(mnt.Options, "ro") {
		mnt.Options = append(mnt.Options, "ro")
	}
	return mnt, nil
}

// parseDevices reads "devices": each a host path, or {path,
// container_path, permissions} with permissions from "rwm" (default all).
func parseDevices(v any) ([]device, error) {
	if l, ok := v.([]any); ok {
		for i, e := range l {
			if p, ok := e.(string); ok {
				l = slices.Clone(l)
				l[i] = map[string]any{"path": p}
			}
		}
		v = l
	}
	items, err := objects(v)
	if err != nil {
		return nil, fmt.Errorf("\"devices\": %w", err)
	}
	out := make([]device, 0, len(items))
	for i, m := range items {
		r := reader{m: m}
		d := device{Path: r.str("path"), ContainerPath: r.str("container_path"), Permissions: r.str("permissions")}
		if r.err != nil {
			return nil, fmt.Errorf("\"devices\"[%d]: %w", i, r.err)
		}
		if d.ContainerPath == "" {
			d.ContainerPath = d.Path
		}
		if d.Permissions == "" {
			d.Permissions = "rwm"
		}
		if !filepath.IsAbs(d.Path) || !filepath.IsAbs(d.ContainerPath) {
			return nil, fmt.Errorf("\"devices\"[%d]: paths %q and %q must be absolute", i, d.Path, d.ContainerPath)
		}
		if strings.Trim(d.Permissions, "rwm") != "" {
			return nil, fmt.Errorf("\"devices\"[%d]: permissions %q are not from \"rwm\"", i, d.Permissions)
		}
		out = append(out, d)
	}
	return out, nil
}

func parseAuth(v any) (*auth, error) {
	if v == nil {
		return nil, nil
	}
	m, ok := asObject(v)
	if !ok {
		return nil, fmt.Errorf("\"auth\" is a %T, not an object", v)
	}
	r := reader{m: m}
	a := &auth{Username: r.str("username"), Password: r.str("password")}
	if r.err != nil {
		return nil, fmt.Errorf("\"auth\": %w", r.err)
	}
	return a, nil
}

// reader reads typed values from a structpb-decoded map, keeping the
// first error.
type reader struct {
	m   map[string]any
	err error
}

func (r *reader) fail(key string, v any, want string) {
	if r.err == nil {
		r.err = fmt.Errorf("%q is a %T, not %s", key, v, want)
	}
}

func (r *reader) str(key string) string {
	v, ok := r.m[key]
	if !ok || v == nil {
		return ""
	}
	s, ok := v.(string)
	if !ok {
		r.fail(key, v, "a string")
	}
	return s
}

func (r *reader) boolean(key string) bool {
	v, ok := r.m[key]
	if !ok || v == nil {
		return false
	}
	b, ok := v.(bool)
	if !ok {
		r.fail(key, v, "a bool")
	}
	return b
}

func (r *reader) strs(key string) []string {
	switch l := r.m[key].(type) {
	case nil:
		return nil
	case []string:
		return slices.Clone(l)
	case []any:
		out := make([]string, 0, len(l))
		for _, e := range l {
			s, ok := e.(string)
			if !ok {
				r.fail(key, e, "a list of strings")
				return nil
			}
			out = append(out, s)
		}
		return out
	default:
		r.fail(key, l, "a list of strings")
		return nil
	}
}

// objects reads a list of objects ([]any of maps, or []map[string]any).
func objects(v any) ([]map[string]any, error) {
	switch l := v.(type) {
	case nil:
		return nil, nil
	case []map[string]any:
		return l, nil
	case []any:
		out := make([]map[string]any, 0, len(l))
		for i, e := range l {
			m, ok := asObject(e)
			if !ok {
				return nil, fmt.Errorf("element %d is a %T, not an object", i, e)
			}
			out = append(out, m)
		}
		return out, nil
	}
	return nil, fmt.Errorf("a %T, not a list of objects", v)
}

func asObject(v any) (map[string]any, bool) {
	switch m := v.(type) {
	case map[string]any:
		return m, true
	case map[string]string:
		out := make(map[string]any, len(m))
		for k, s := range m {
			out[k] = s
		}
		return out, true
	}
	return nil, false
}

// cpuShares turns MHz into cgroup CPU shares: 1000 MHz is 1024 shares,
// never under the kernel's minimum of 2. Zero means no setting.
func cpuShares(mhz int64) uint64 {
	if mhz <= 0 {
		return 0
	}
	return uint64(max(mhz*1024/1000, 2))
}

// memoryLimits returns the hard limit and the soft reservation in bytes:
// MemoryMaxMB is the limit when set, MemoryMB otherwise; MemoryMB is the
// reservation when it is below the limit.
func memoryLimits(cfg *driver.TaskConfig) (limit, reservation int64) {
	const mb = 1 << 20
	limitMB := cfg.MemoryMaxMB
	if limitMB <= 0 {
		limitMB = cfg.MemoryMB
	}
	if limitMB <= 0 {
		return 0, 0
	}
	if cfg.MemoryMB > 0 && cfg.MemoryMB < limitMB {
		reservation = cfg.MemoryMB * mb
	}
	return limitMB * mb, reservation
}

// envList renders env as sorted KEY=VALUE.
func envList(env map[string]string) []string {
	out := make([]string, 0, len(env))
	for k, v := range env {
		out = append(out, k+"="+v)
	}
	sort.Strings(out)
	return out
}
