package java

import "errors"

// ErrNoJava: no java runtime was found (Config.JavaHome, or PATH).
var ErrNoJava = errors.New("java: no java runtime")
