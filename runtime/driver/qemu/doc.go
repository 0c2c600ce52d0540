// Package qemu is the qemu task driver: each task is a virtual machine run
// by qemu-system-x86_64, as Nomad's qemu driver runs it.
//
// Task config (Nomad's names):
//   - image_path (required): the VM's disk image, relative to the task dir
//     or absolute inside the allocation dir or one of Config.ImagePaths;
//   - drive_interface: the -drive interface ("ide" by default);
//   - accelerator: "tcg" (the default, as in Nomad) or "kvm" (refused at
//     start when /dev/kvm cannot be used);
//   - args: extra qemu arguments, e.g. -kernel, -initrd and -append to boot
//     a kernel directly;
//   - port_map: port label to guest port; each label's host port (the
//     task's NOMAD_HOST_PORT_<label>, on NOMAD_HOST_IP_<label> when set)
//     is forwarded to the guest port, tcp and udp, by user-mode networking
//     (-netdev user with hostfwd, a virtio-net-pci NIC);
//   - graceful_shutdown: stop sends system_powerdown on the QEMU monitor
//     (the guest must handle the ACPI power button) instead of the kill
//     signal; either way the VM is killed after kill_timeout.
//
// The VM gets -m from resources.memory and -smp from resources.cpu (one
// vCPU per host core's worth of MHz, at least one). The serial console is
// qemu's stdout (-chardev stdio): the task's stdout log, qemu's own
// messages its stderr log; there is no display. With a logs block
// (TaskConfig.LogMaxFiles, LogMaxFileSizeMB) both rotate as StdoutPath.N
// and StderrPath.N (runtime/logrotate): the shim's stdout and stderr are
// then the pipes of a log forwarder (runtime/logmon, the troupe binary
// as `troupe logmon`, Config.LogmonPath) that the driver starts before
// the shim, in a session of its own, so that it goes on rotating the logs
// while no agent runs and exits once the shim and qemu are gone (the
// pipes' EOF). The handle records its pid; a VM's exit is reported once
// the forwarder has written all and exited (at most logmon.DrainTimeout
// later), after a restart too. Without a logs block the shim appends to
// the two files. The monitor listens on a unix socket in the
// task dir (in the temp dir when that path is longer than a socket path
// may be).
//
// VMs outlive the agent: qemu runs under a /bin/sh shim in a session of
// its own, which writes qemu's exit status to the task's state directory
// (<task dir>/.qemu). The handle records the shim's and qemu's pids with
// their start times, so RecoverTask re-attaches after an agent restart
// (a reused pid counts as gone) and still learns how the VM ended.
//
// Each VM runs in a cgroup of its own (runtime/cgroups, below
// Config.CgroupParent, Nomad's "<allocID>.<task>" as exec's tasks): the
// shim is moved into it before it starts qemu, so qemu is born there. Its
// hard memory limit is the guest's memory (memory_max when set, else
// memory) plus memoryOverheadMB for qemu itself, its CPU shares the task's
// MHz, a pids limit; TaskStats reads the VM's usage from it; a kill ends
// with a kill of the group (nothing qemu started survives) and
// DestroyTask removes it. Without cgroups (not root) VMs run without.
// Commands cannot be run in a VM: the driver is no driver.Execer, so
// driver.ExecIn answers ErrExecNotSupported (as Nomad's qemu driver does
// not support exec either).
//
// Fingerprint: driver.qemu = "1" and driver.qemu.version when
// qemu-system-x86_64 runs; driver.qemu.kvm = "true" or "false" (whether
// /dev/kvm answers KVM_GET_API_VERSION).
package qemu
