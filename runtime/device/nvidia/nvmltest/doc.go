// Package nvmltest provides an NVML mock for tests: go-nvml's DGX H100
// mock (eight "NVIDIA H100 80GB HBM3", driver 550.54.15) with the queries
// of troupe's nvidia plugin filled in, and NVML events a test sends.
//
//	s := nvmltest.NewDGXH100()
//	p := nvidia.New(nvidia.Config{NVML: s, EventTimeout: 10 * time.Millisecond})
//	s.GPU(3).GetMemoryInfoFunc = func() (nvml.Memory, nvml.Return) { return nvml.Memory{}, nvml.ERROR_GPU_IS_LOST }
//	s.SendXID(5, 79)
//
// Change a GPU's functions before the plugin uses the Server.
package nvmltest
