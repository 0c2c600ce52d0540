package driver

import (
	"fmt"
	"strconv"
	"strings"
	"syscall"
)

// signals maps signal names without the "SIG" prefix to their numbers.
var signals = map[string]syscall.Signal{
	"HUP": syscall.SIGHUP, "INT": syscall.SIGINT, "QUIT": syscall.SIGQUIT,
	"ILL": syscall.SIGILL, "TRAP": syscall.SIGTRAP, "ABRT": syscall.SIGABRT,
	"IOT": syscall.SIGABRT, "BUS": syscall.SIGBUS, "FPE": syscall.SIGFPE,
	"KILL": syscall.SIGKILL, "USR1": syscall.SIGUSR1, "SEGV": syscall.SIGSEGV,
	"USR2": syscall.SIGUSR2, "PIPE": syscall.SIGPIPE, "ALRM": syscall.SIGALRM,
	"TERM": syscall.SIGTERM, "CHLD": syscall.SIGCHLD, "CONT": syscall.SIGCONT,
	"STOP": syscall.SIGSTOP, "TSTP": syscall.SIGTSTP, "TTIN": syscall.SIGTTIN,
	"TTOU": syscall.SIGTTOU, "URG": syscall.SIGURG, "XCPU": syscall.SIGXCPU,
	"XFSZ": syscall.SIGXFSZ, "VTALRM": syscall.SIGVTALRM, "PROF": syscall.SIGPROF,
	"WINCH": syscall.SIGWINCH, "IO": syscall.SIGIO, "SYS": syscall.SIGSYS,
}

// ParseSignal parses a signal name ("SIGTERM", "TERM", "sigterm") or number
// ("15"). Anything else is a wrapped ErrUnknownSignal.
func ParseSignal(name string) (syscall.Signal, error) {
	s := strings.ToUpper(strings.TrimSpace(name))
	if n, err := strconv.Atoi(s); err == nil {
		if n <= 0 || n > 64 {
			return 0, fmt.Errorf("%w: %q", ErrUnknownSignal, name)
		}
		return syscall.Signal(n), nil
	}
	if sig, ok := signals[strings.TrimPrefix(s, "SIG")]; ok {
		return sig, nil
	}
	return 0, fmt.Errorf("%w: %q", ErrUnknownSignal, name)
}

// StopSignal is ParseSignal with SIGTERM for the empty name, as StopTask
// uses it.
func StopSignal(name string) (syscall.Signal, error) {
	if strings.TrimSpace(name) == "" {
		return syscall.SIGTERM, nil
	}
	return ParseSignal(name)
}
