package qemu

import (
	"os"

	"golang.org/x/sys/unix"
)

// kvmGetAPIVersion is the KVM_GET_API_VERSION ioctl.
const kvmGetAPIVersion = 0xAE00

// kvmUsable reports whether /dev/kvm opens and answers its API version.
func kvmUsable() bool {
	f, err := os.OpenFile("/dev/kvm", os.O_RDWR, 0)
	if err != nil {
		return false
	}
	defer f.Close()
	v, err := unix.IoctlRetInt(int(f.Fd()), kvmGetAPIVersion)
	return err == nil && v > 0
}
