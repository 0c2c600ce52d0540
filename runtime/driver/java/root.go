package java

import (
	"fmt"
	"path/filepath"
	"slices"
	"strings"

	"github.com/troupe-dev/troupe/runtime/driver"
	"github.com/troupe-dev/troupe/runtime/driver/exec"
)

// taskDirs are the task dir's entries an isolated task sees, at "/" plus
// their name (Nomad's layout: local/app.jar is /local/app.jar).
var taskDirs = []string{driver.TaskLocalDir, driver.TaskAllocDir, driver.TaskSecretsDir, driver.TaskTmpDir}

// isolate rewrites an isolated task's paths as the task sees them in its
// root: a relative jar_path or class_path entry is relative to the task
// dir, as in Nomad (local/app.jar is /local/app.jar); an absolute one must
// be visible there. It returns the java binary inside the root and the
// task's isolation with the JVM's home bound in, read-only, when no
// chroot_env path holds it.
func (d *Driver) isolate(cfg *driver.TaskConfig, spec *taskSpec, bin string) (string, *driver.Isolation, error) {
	chroot := d.cfg.ChrootEnv
	if chroot == nil {
		chroot = exec.DefaultChrootEnv
	}
	iso := *cfg.Isolation
	visible := slices.Clone(taskDirs)
	for _, dst := range chroot {
		visible = append(visible, dst)
	}
	for _, m := range iso.Mounts {
		visible = append(visible, m.Destination)
	}
	var err error
	if spec.JarPath != "" {
		if spec.JarPath, err = inRoot(spec.JarPath, visible); err != nil {
			return "", nil, fmt.Errorf("%w: java: %s: jar_path %w", driver.ErrInvalidConfig, cfg.ID, err)
		}
	}
	if spec.ClassPath != "" {
		entries := filepath.SplitList(spec.ClassPath)
		for i, e := range entries {
			if entries[i], err = inRoot(e, visible); err != nil {
				return "", nil, fmt.Errorf("%w: java: %s: class_path %w", driver.ErrInvalidConfig, cfg.ID, err)
			}
		}
		spec.ClassPath = strings.Join(entries, string(filepath.ListSeparator))
	}
	for src, dst := range chroot {
		if rel, ok := under(bin, src); ok {
			return filepath.Join(dst, rel), &iso, nil
		}
	}
	home := filepath.Dir(filepath.Dir(bin)) // <home>/bin/java
	if home == "/" || inside(home, taskDirs) {
		return "", nil, fmt.Errorf("%w: %s: %s cannot be bound into the task's root: put the JVM under a chroot_env path such as /usr, or set the java home",
			ErrNoJava, cfg.ID, bin)
	}
	iso.Mounts = append(slices.Clone(iso.Mounts), driver.Mount{Source: home, Destination: home, ReadOnly: true})
	return bin, &iso, nil
}

// inRoot is path p as an isolated task sees it: relative to the task dir
// (local/x is /local/x), or absolute and beneath one of the visible dirs.
func inRoot(p string, visible []string) (string, error) {
	if !filepath.IsAbs(p) {
		abs := filepath.Join("/", p)
		if strings.HasPrefix(filepath.Clean(p), "..") || !inside(abs, taskDirs) {
			return "", fmt.Errorf("%q: a relative path is relative to the task dir, of which an isolated task sees local/, alloc/, secrets/ and tmp/", p)
		}
		return abs, nil
	}
	if !inside(p, visible) {
		return "", fmt.Errorf("%q is not visible in the task's root (its /local, /alloc, /secrets, /tmp and the client's chroot_env: %s)",
			p, strings.Join(visible[len(taskDirs):], ", "))
	}
	return filepath.Clean(p), nil
}

// inside: p is one of dirs or beneath one.
func inside(p string, dirs []string) bool {
	for _, d := range dirs {
		if _, ok := under(p, d); ok {
			return true
		}
	}
	return false
}

// under is p relative to dir when p is dir or beneath it.
func under(p, dir string) (string, bool) {
	rel, err := filepath.Rel(filepath.Clean(dir), filepath.Clean(p))
	if err != nil || rel == ".." || strings.HasPrefix(rel, "../") {
		return "", false
	}
	return rel, true
}
