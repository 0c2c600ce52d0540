package qemu

import (
	"context"
	"os/exec"
	"regexp"
	"strconv"

	"github.com/troupe-dev/troupe/runtime/driver"
)

var versionRE = regexp.MustCompile(`version (\d+\.\d+\.\d+)`)

// Fingerprint implements driver.Driver: qemu is detected when its binary
// prints a version.
func (d *Driver) Fingerprint(ctx context.Context) driver.Fingerprint {
	out, err := exec.CommandContext(ctx, d.cfg.Binary, "--version").Output()
	if err != nil {
		return driver.Fingerprint{HealthDescription: "qemu: " + d.cfg.Binary + " --version: " + err.Error()}
	}
	m := versionRE.FindSubmatch(out)
	if m == nil {
		return driver.Fingerprint{HealthDescription: "qemu: no version in " + d.cfg.Binary + " --version"}
	}
	return driver.Fingerprint{Detected: true, Healthy: true, HealthDescription: "Healthy",
		Attributes: map[string]string{"driver.qemu": "1", "driver.qemu.version": string(m[1]),
			"driver.qemu.kvm": strconv.FormatBool(kvmUsable())}}
}
