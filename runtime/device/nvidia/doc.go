// Package nvidia is troupe's device plugin for NVIDIA GPUs, on NVML
// through github.com/NVIDIA/go-nvml. It implements device.Plugin and
// device.Watcher.
//
//	p := nvidia.New(nvidia.Config{Logger: logger}) // nvml.New(): libnvidia-ml.so.1
//	groups, err := p.Fingerprint(ctx)
//	res, err := p.Reserve([]string{"GPU-8f6b…", "GPU-1c2d…"})
//
// Fingerprint groups the GPUs by model name into device groups
// nvidia/gpu/<name> ("nvidia/gpu/NVIDIA H100 80GB HBM3"), one instance per
// GPU whose ID is the GPU's UUID and whose locality holds its PCI bus ID.
// A group's attributes (Attr* constants: memory_mib, cuda_compute,
// driver_version, power_w, bar1_mib, clocks, display and persistence mode)
// are the first instance's values, per attribute. A query a GPU does not
// support leaves its attribute out; any other failed query marks that GPU
// unhealthy with the NVML error in HealthDescription. A GPU whose handle or
// UUID cannot be read any more is reported unhealthy under the UUID it had
// before, or skipped (and logged once) if it never had one.
//
// Watch listens for XID critical errors (NVML events) and marks the GPU
// unhealthy for the rest of the agent's life; XIDs that applications cause
// (DefaultIgnoredXids) are ignored. Where NVML has no events, Watch logs
// once and returns an error wrapping device.ErrWatchUnsupported.
//
// The library is loaded and initialised on the first call (which may take
// seconds on a host without persistence mode), not in New. On a host
// without libnvidia-ml.so.1, or whose NVML fails to initialise, the plugin
// logs one line and then reports no devices and no error; Available says
// why. go-nvml loads the library with dlopen, so a binary built with cgo
// (which this package requires) starts on any host.
//
// Reserve: see Plugin.Reserve for the environment, the device nodes and
// the driver files (libraries and tools) that containers get.
// MIG partitions are not reported: a MIG-enabled GPU is one instance.
package nvidia
