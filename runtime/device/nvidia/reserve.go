package nvidia

import (
	"cmp"
	"fmt"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"github.com/NVIDIA/go-nvml/pkg/nvml"

	"github.com/troupe-dev/troupe/runtime/device"
)

// Environment variables that Reserve sets.
const (
	EnvVisibleDevices     = "NVIDIA_VISIBLE_DEVICES"
	EnvCudaVisibleDevices = "CUDA_VISIBLE_DEVICES"
	EnvCudaDeviceOrder    = "CUDA_DEVICE_ORDER"
)

// ControlDevices are the device nodes every GPU task needs besides its
// /dev/nvidia<minor> nodes.
var ControlDevices = []string{"/dev/nvidiactl", "/dev/nvidia-uvm", "/dev/nvidia-uvm-tools"}

// chosen is a GPU that Reserve hands out.
type chosen struct {
	uuid         string
	index, minor int
}

// Reserve returns what a task needs to use the GPUs with these UUIDs:
//
//   - NVIDIA_VISIBLE_DEVICES: the UUIDs, in NVML index order, for the NVIDIA
//     container runtime;
//   - CUDA_VISIBLE_DEVICES: the GPUs' NVML indices on the host ("2,5"),
//     with CUDA_DEVICE_ORDER=PCI_BUS_ID; for an isolated task
//     (Reservation.IsolatedEnvs) 0..n-1 ("0,1");
//   - device nodes /dev/nvidia<minor> for each GPU, then ControlDevices,
//     all with permissions "rwm" (on the host under Config.Root);
//   - read-only mounts of the host's driver libraries and tools
//     (DriverLibraries at ContainerLibDir, DriverBinaries at
//     ContainerBinDir) that exist on the host, for containers: the
//     libraries must match the kernel module, so images do not have them.
//
// CUDA_VISIBLE_DEVICES holds host indices because an exec task is not
// isolated: it sees every GPU on the host, so 0..n-1 would be the wrong
// GPUs. NVML numbers GPUs in PCI bus order, and CUDA does the same only
// with CUDA_DEVICE_ORDER=PCI_BUS_ID (its default puts the fastest first).
// A task that is isolated (a container given only these device nodes)
// sees only its GPUs, which CUDA there numbers from 0.
func (p *Plugin) Reserve(ids []string) (*device.Reservation, error) {
	ids = device.Dedupe(ids)
	if len(ids) == 0 {
		return nil, device.ErrNoInstances
	}
	if ok, reason := p.Available(); !ok {
		return nil, fmt.Errorf("%w: nvidia: %s", device.ErrUnavailable, reason)
	}
	gpus := make([]chosen, 0, len(ids))
	for _, id := range ids {
		c, err := p.lookup(id)
		if err != nil {
			return nil, err
		}
		gpus = append(gpus, c)
	}
	slices.SortFunc(gpus, func(a, b chosen) int { return cmp.Compare(a.index, b.index) })

	uuids := make([]string, len(gpus))
	indices := make([]string, len(gpus))
	isolated := make([]string, len(gpus))
	res := &device.Reservation{}
	for i, g := range gpus {
		uuids[i] = g.uuid
		indices[i] = strconv.Itoa(g.index)
		isolated[i] = strconv.Itoa(i)
		res.Devices = append(res.Devices, p.node(fmt.Sprintf("/dev/nvidia%d", g.minor)))
	}
	for _, path := range ControlDevices {
		res.Devices = append(res.Devices, p.node(path))
	}
	version, ret := p.lib.SystemGetDriverVersion()
	if ret != nvml.SUCCESS {
		version = ""
	}
	res.Mounts = driverMounts(p.root, version)
	res.Envs = map[string]string{
		EnvVisibleDevices:     strings.Join(uuids, ","),
		EnvCudaVisibleDevices: strings.Join(indices, ","),
		EnvCudaDeviceOrder:    "PCI_BUS_ID",
	}
	res.IsolatedEnvs = map[string]string{EnvCudaVisibleDevices: strings.Join(isolated, ",")}
	return res, nil
}

// lookup finds the GPU with this UUID.
func (p *Plugin) lookup(uuid string) (chosen, error) {
	dev, ret := p.lib.DeviceGetHandleByUUID(uuid)
	switch ret {
	case nvml.SUCCESS:
	case nvml.ERROR_NOT_FOUND, nvml.ERROR_INVALID_ARGUMENT:
		return chosen{}, fmt.Errorf("%w: nvidia GPU %s", device.ErrUnknownInstance, uuid)
	default:
		return chosen{}, fmt.Errorf("nvidia: GPU %s: DeviceGetHandleByUUID: %w", uuid, ret)
	}
	index, ret := dev.GetIndex()
	if ret != nvml.SUCCESS {
		return chosen{}, fmt.Errorf("nvidia: GPU %s: GetIndex: %w", uuid, ret)
	}
	minor, ret := dev.GetMinorNumber()
	if ret != nvml.SUCCESS {
		return chosen{}, fmt.Errorf("nvidia: GPU %s: GetMinorNumber: %w", uuid, ret)
	}
	return chosen{uuid: uuid, index: index, minor: minor}, nil
}

// node is the device node at path in a container, path under the root on
// the host.
func (p *Plugin) node(path string) device.DeviceNode {
	return device.DeviceNode{HostPath: filepath.Join(p.root, path), ContainerPath: path, Permissions: "rwm"}
}
