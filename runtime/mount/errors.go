package mount

import "errors"

// ErrBindRefused: the kernel refused a bind mount with EPERM (not root, or
// root without CAP_SYS_ADMIN). Bind wraps it only for the bind itself,
// never for the read-only remount that follows.
var ErrBindRefused = errors.New("mount: bind mount refused")
