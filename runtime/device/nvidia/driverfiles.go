package nvidia

import (
	"os"
	"path"
	"path/filepath"
	"slices"

	"github.com/troupe-dev/troupe/runtime/device"
)

// Where a containerd task finds the host's driver libraries and tools:
// the directories that NVIDIA's CUDA images put on LD_LIBRARY_PATH and
// PATH (/usr/local/nvidia/lib64, /usr/local/nvidia/bin). An image of
// another kind sets those variables itself.
const (
	ContainerLibDir = "/usr/local/nvidia/lib64"
	ContainerBinDir = "/usr/local/nvidia/bin"
)

// DriverLibraries are the user-space driver libraries, by soname, that a
// CUDA or NVML program in a container needs from the host: they must
// match the kernel module, so images do not ship them.
var DriverLibraries = []string{
	"libcuda.so.1", "libnvidia-ml.so.1", "libnvidia-ptxjitcompiler.so.1", "libnvidia-nvvm.so.4",
	"libnvidia-opencl.so.1", "libnvidia-allocator.so.1", "libcudadebugger.so.1",
}

// VersionedDriverLibraries are driver libraries that exist only under
// their full version ("libnvidia-gpucomp.so.550.54.15", used by the PTX
// JIT of drivers 545 and later); the driver's version is appended.
var VersionedDriverLibraries = []string{"libnvidia-gpucomp.so"}

// DriverBinaries are the driver's tools given to containers.
var DriverBinaries = []string{"nvidia-smi", "nvidia-debugdump", "nvidia-persistenced",
	"nvidia-cuda-mps-control", "nvidia-cuda-mps-server"}

// libDirs and binDirs are searched, in order, under Config.Root: the
// distributions' library directories (Debian's packages link the sonames
// there from nvidia/current) and the usual places of executables.
var (
	libDirs = []string{"/usr/lib/x86_64-linux-gnu", "/usr/lib/aarch64-linux-gnu", "/usr/lib64", "/usr/lib",
		"/lib/x86_64-linux-gnu", "/lib/aarch64-linux-gnu", "/lib64"}
	binDirs = []string{"/usr/bin", "/usr/sbin", "/usr/local/bin", "/bin"}
)

// driverMounts finds the driver's libraries and tools under root and
// returns them as read-only bind mounts at ContainerLibDir/<soname> and
// ContainerBinDir/<name>, the host side with its symlinks resolved. A file
// the host does not have is left out; none (no driver installed) is none.
// version is the driver's ("550.54.15"; "" when NVML does not say), for
// VersionedDriverLibraries.
func driverMounts(root, version string) []device.Mount {
	var out []device.Mount
	add := func(names, dirs []string, target string) {
		for _, name := range names {
			if host, ok := findFile(root, dirs, name); ok {
				out = append(out, device.Mount{HostPath: host, ContainerPath: path.Join(target, name), ReadOnly: true})
			}
		}
	}
	libs := DriverLibraries
	if version != "" {
		libs = slices.Clone(libs)
		for _, l := range VersionedDriverLibraries {
			libs = append(libs, l+"."+version)
		}
	}
	add(libs, libDirs, ContainerLibDir)
	add(DriverBinaries, binDirs, ContainerBinDir)
	return out
}

// findFile returns the first regular file (after symlinks) named name in
// dirs under root.
func findFile(root string, dirs []string, name string) (string, bool) {
	for _, d := range dirs {
		p, err := filepath.EvalSymlinks(filepath.Join(root, d, name))
		if err != nil {
			continue
		}
		if fi, err := os.Stat(p); err == nil && fi.Mode().IsRegular() {
			return p, true
		}
	}
	return "", false
}
