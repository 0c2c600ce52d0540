package jobspec

import (
	"errors"
	"strings"

	"github.com/troupe-dev/troupe/messages"
	"github.com/troupe-dev/troupe/runtime/driver"
	"github.com/troupe-dev/troupe/runtime/driver/qemu"
)

// validateQemu checks a qemu task's config as the driver reads it.
func validateQemu(c checker, t *messages.Task) {
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
