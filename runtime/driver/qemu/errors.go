package qemu

import "errors"

var (
	// ErrNoKVM: a task asked for the kvm accelerator on a host without a
	// usable /dev/kvm.
	ErrNoKVM = errors.New("qemu: kvm accelerator unavailable (no usable /dev/kvm)")
	// ErrStartTimeout: qemu did not write its pid file in time.
	ErrStartTimeout = errors.New("qemu: timed out waiting for qemu to start")
)
