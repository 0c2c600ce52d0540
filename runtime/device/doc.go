// Package device is troupe's interface to host devices such as GPUs: a
// small Plugin interface that a vendor package implements (runtime/device/nvidia),
// a Manager that holds several plugins and merges what they find, and Fake,
// an in-memory Plugin for the tests of other packages.
//
// A plugin fingerprints the host into groups of identical devices, each a
// messages.NodeDeviceResource named vendor/type/name ("nvidia/gpu/NVIDIA
// H100 80GB HBM3", see GroupID) with one NodeDevice per physical instance.
// The scheduler picks instance IDs from those groups; the client asks the
// plugin to Reserve them, which returns the environment variables, device
// nodes and mounts a task needs to use them:
//
//	m, err := device.NewManager(logger, nvidia.New(nvidia.Config{Logger: logger}))
//	groups, err := m.Fingerprint(ctx)         // NodeResources.Devices
//	res, err := m.Reserve([]string{"GPU-…"}) // Envs, Devices, Mounts for the task
//	go m.Watch(ctx, func() { /* fingerprint again */ })
//
// A plugin whose hardware or library is missing reports no devices and no
// error. An instance that cannot be queried is reported unhealthy, with the
// reason in HealthDescription, instead of failing the whole fingerprint.
//
// Every call may block on the host (driver libraries, ioctls): run them in
// a worker, never in an actor's Receive. Plugins, the Manager and Fake are
// safe for concurrent use.
package device
