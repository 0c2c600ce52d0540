package agent

import (
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/troupe-dev/troupe/messages"
)

// maxHostVolumeName bounds a host volume's name.
const maxHostVolumeName = 128

// ParseHostVolume reads one -host-volume flag, name=/path with an optional
// ":ro" (read-only) or ":rw" suffix: Nomad's client
// host_volume "name" { path = "/path", read_only = true }. The name and
// path are checked by Config.Validate.
func ParseHostVolume(s string) (string, *messages.ClientHostVolume, error) {
	name, path, ok := strings.Cut(s, "=")
	if !ok || name == "" || path == "" {
		return "", nil, fmt.Errorf("%w: -host-volume %q: want name=/path or name=/path:ro", ErrConfig, s)
	}
	v := &messages.ClientHostVolume{Path: path}
	if p, ok := strings.CutSuffix(path, ":ro"); ok {
		v.Path, v.ReadOnly = p, true
	} else if p, ok := strings.CutSuffix(path, ":rw"); ok {
		v.Path = p
	}
	return name, v, nil
}

// AddHostVolume adds a parsed -host-volume to the configuration; a name
// given twice is an error.
func (c *Config) AddHostVolume(s string) error {
	name, v, err := ParseHostVolume(s)
	if err != nil {
		return err
	}
	if _, dup := c.HostVolumes[name]; dup {
		return fmt.Errorf("%w: -host-volume %q is given twice", ErrConfig, name)
	}
	if c.HostVolumes == nil {
		c.HostVolumes = map[string]*messages.ClientHostVolume{}
	}
	c.HostVolumes[name] = v
	return nil
}

// validateHostVolumes checks every host volume: a name of letters,
// digits, '-', '_' and '.', and an absolute path of an existing
// directory (cleaned in place).
func (c *Config) validateHostVolumes() error {
	names := make([]string, 0, len(c.HostVolumes))
	for name := range c.HostVolumes {
		names = append(names, name)
	}
	sort.Strings(names)
	for _, name := range names {
		if err := hostVolumeNameProblem(name); err != "" {
			return fmt.Errorf("%w: host volume %q: name %s", ErrConfig, name, err)
		}
		v := c.HostVolumes[name]
		if v == nil || v.Path == "" {
			return fmt.Errorf("%w: host volume %q: path is required", ErrConfig, name)
		}
		if !filepath.IsAbs(v.Path) {
			return fmt.Errorf("%w: host volume %q: path %q must be absolute", ErrConfig, name, v.Path)
		}
		fi, err := os.Stat(v.Path)
		switch {
		case err != nil:
			return fmt.Errorf("%w: host volume %q: path %q: %w", ErrConfig, name, v.Path, err)
		case !fi.IsDir():
			return fmt.Errorf("%w: host volume %q: path %q is not a directory", ErrConfig, name, v.Path)
		}
		v.Path = filepath.Clean(v.Path)
	}
	return nil
}

// hostVolumeNameProblem says what is wrong with a host volume name ("":
// nothing).
func hostVolumeNameProblem(name string) string {
	switch {
	case name == "":
		return "must not be empty"
	case len(name) > maxHostVolumeName:
		return fmt.Sprintf("is longer than %d bytes", maxHostVolumeName)
	}
	for _, r := range name {
		if !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '-' || r == '_' || r == '.') {
			return fmt.Sprintf("has %q: use letters, digits, '-', '_' and '.'", r)
		}
	}
	return ""
}
