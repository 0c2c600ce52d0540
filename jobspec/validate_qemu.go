package jobspec

import (
	"errors"
	"strings"

	"github.com/troupe-dev/troupe/messages"
	"github.com/troupe-dev/troupe/runtime/driver"
	"github.com/troupe-dev/troupe/runtime/driver/qemu"
)

// validateQemu checks a qemu task's config as the driver reads it; its
// ports are forwarded from the host, so its group's network is the
// host's (as in Nomad, whose qemu driver has no bridge mode).
func validateQemu(c checker, g *messages.TaskGroup, t *messages.Task) {
	for _, n := range g.GetNetworks() {
		if n.GetMode() == "bridge" {
			c.addf(`the qemu driver forwards ports from the host: the group's network mode must be "host", not "bridge"`)
		}
	}
	err := qemu.CheckConfig(t.GetConfig().AsMap())
	if err == nil {
		return
	}
	msg := err.Error()
	if errors.Is(err, driver.ErrInvalidConfig) {
		msg = strings.TrimPrefix(strings.TrimPrefix(msg, driver.ErrInvalidConfig.Error()+": "), "qemu: ")
	}
	c.addf("config: %s", msg)
}
