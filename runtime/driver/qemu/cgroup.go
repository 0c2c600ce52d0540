package qemu

import (
	"sync"

	"github.com/troupe-dev/troupe/runtime/cgroups"
)

// memoryOverheadMB is what a VM's group may hold beyond the guest's
// memory: qemu itself (its code, TCG's translation buffer, device
// emulation). Without it a guest that uses the memory it was given, or
// qemu alone at start for a small guest, would be OOM-killed.
const memoryOverheadMB = 128

// vmCgroups is the driver's side of its VMs' cgroups: the manager (nil
// when the host has none) and the last usage sample of each task (for
// CPU percentages).
type vmCgroups struct {
	once    sync.Once
	mgr     *cgroups.Manager
	samples cgroups.Samples
}
