package jobspec

import (
	"errors"
	"strings"

	"github.com/troupe-dev/troupe/messages"
	"github.com/troupe-dev/troupe/runtime/driver"
	"github.com/troupe-dev/troupe/runtime/driver/java"
)

// validateJava checks a java task's config as the driver reads it.
func validateJava(c checker, t *messages.Task) {
	err := java.CheckConfig(t.GetConfig().AsMap())
	if err == nil {
		return
	}
	msg := err.Error()
	if errors.Is(err, driver.ErrInvalidConfig) {
		msg = strings.TrimPrefix(strings.TrimPrefix(msg, driver.ErrInvalidConfig.Error()+": "), "java: ")
	}
	c.addf("config: %s", msg)
}
