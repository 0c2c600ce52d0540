package java

import (
	"context"
	"fmt"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"

	"github.com/troupe-dev/troupe/runtime/driver"
)

// versionRE finds the version in `java -version`'s first line
// (openjdk version "17.0.15" 2025-04-15; java version "1.8.0_402").
var versionRE = regexp.MustCompile(`version "([^"]+)"`)

// digitsRE is the version when the first line has no quoted one.
var digitsRE = regexp.MustCompile(`\d[\d._]*`)

// javaInfo is what `java -version` says about a JVM.
type javaInfo struct {
	Version string // 17.0.15
	Runtime string // OpenJDK Runtime Environment (build ...)
	VM      string // OpenJDK 64-Bit Server VM (build ..., mixed mode)
}

// parseVersion reads `java -version`'s output (it prints on stderr);
// the lines a JVM prints about picked-up options come first and are
// skipped. It needs the version, runtime and VM lines.
func parseVersion(out string) (javaInfo, error) {
	var lines []string
	for _, l := range strings.Split(strings.TrimSpace(out), "\n") {
		l = strings.TrimSpace(l)
		if l == "" || strings.HasPrefix(l, "Picked up ") {
			continue
		}
		lines = append(lines, l)
	}
	if len(lines) < 3 {
		return javaInfo{}, fmt.Errorf("java -version: want version, runtime and VM lines, got %q", out)
	}
	v := ""
	if m := versionRE.FindStringSubmatch(lines[0]); m != nil {
		v = m[1]
	} else {
		v = digitsRE.FindString(lines[0])
	}
	if v == "" {
		return javaInfo{}, fmt.Errorf("java -version: no version in %q", lines[0])
	}
	return javaInfo{Version: v, Runtime: lines[1], VM: lines[2]}, nil
}

// binary is the java program: JavaHome/bin/java, or "java" on PATH, with
// its symlinks resolved (as /usr/bin/java leads to the JVM's own dir).
func (d *Driver) binary() (string, error) {
	p := filepath.Join(d.cfg.JavaHome, "bin", "java")
	if d.cfg.JavaHome == "" {
		lp, err := exec.LookPath("java")
		if err != nil {
			return "", fmt.Errorf("%w: java is not on PATH and no java home is configured", ErrNoJava)
		}
		p = lp
	}
	real, err := filepath.EvalSymlinks(p)
	if err != nil {
		return "", fmt.Errorf("%w: %s: %w", ErrNoJava, p, err)
	}
	abs, err := filepath.Abs(real)
	if err != nil {
		return "", fmt.Errorf("%w: %s: %w", ErrNoJava, p, err)
	}
	return abs, nil
}

// Fingerprint implements driver.Driver: java is detected when the
// wrapped driver is and a JVM answers `java -version`; the attributes are
// Nomad's (driver.java, driver.java.version, driver.java.runtime,
// driver.java.vm).
func (d *Driver) Fingerprint(ctx context.Context) driver.Fingerprint {
	base := d.inner.Fingerprint(ctx)
	if !base.Detected {
		return driver.Fingerprint{HealthDescription: fmt.Sprintf("java: runs through the %s driver, which is undetected: %s",
			d.inner.Name(), base.HealthDescription)}
	}
	bin, err := d.binary()
	if err != nil {
		return driver.Fingerprint{HealthDescription: err.Error()}
	}
	out, err := exec.CommandContext(ctx, bin, "-version").CombinedOutput()
	if err != nil {
		return driver.Fingerprint{HealthDescription: fmt.Sprintf("java: %s -version: %v", bin, err)}
	}
	info, err := parseVersion(string(out))
	if err != nil {
		return driver.Fingerprint{HealthDescription: "java: " + err.Error()}
	}
	fp := driver.Fingerprint{Detected: true, Healthy: base.Healthy, HealthDescription: base.HealthDescription,
		Attributes: map[string]string{"driver.java": "1", "driver.java.version": info.Version,
			"driver.java.runtime": info.Runtime, "driver.java.vm": info.VM}}
	if !base.Healthy {
		fp.HealthDescription = fmt.Sprintf("java: the %s driver is unhealthy: %s", d.inner.Name(), base.HealthDescription)
	}
	return fp
}
