//go:build !linux

package node

import "runtime"

// reservableCores is every CPU: only Linux tells the agent's cpuset.
func reservableCores() []uint32 { return allCores(runtime.NumCPU()) }
