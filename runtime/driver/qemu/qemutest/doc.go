// Package qemutest builds what the qemu driver's tests boot: it finds the
// host's kernel (Debian's /boot/vmlinuz-*, from scripts/setup.sh) and
// builds an initramfs (cpio newc, gzip) from busybox-static and the
// kernel's virtio-net and ACPI button modules, whose /init brings up eth0
// on QEMU's user network (10.0.2.15/24 via 10.0.2.2), serves a file over
// HTTP on a guest port, prints a marker on the serial console and powers
// the guest off on the ACPI power button (busybox acpid).
package qemutest
