// Package runtime holds troupe's host adapters: the code that touches the
// machine an agent runs on. Its sub-packages are task drivers
// (runtime/driver, runtime/driver/exec, runtime/driver/containerd), CNI
// bridge networking (runtime/cni), CSI plugin clients and a CSI plugin of
// our own (runtime/csi, runtime/csi/hostpath) and the client's state file
// (runtime/clientstate); GPU and other devices (runtime/device). Each adapter is a small
// interface with a real implementation and an in-memory fake for actor
// tests. Packages under runtime may import messages, never actors or
// cluster: the actors call into runtime, never the other way round.
package runtime
