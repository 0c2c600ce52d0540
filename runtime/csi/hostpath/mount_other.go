//go:build !linux

package hostpath

// mountTarget uses a symlink: bind mounts are Linux-only.
func (p *Plugin) mountTarget(src, target string, _ bool) error { return symlinkTarget(src, target) }

func unmount(string) error { return nil }

func isMountPoint(string) (bool, error) { return false, nil }
