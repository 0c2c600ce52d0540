package alloc

import (
	"fmt"
	"os"

	"github.com/troupe-dev/troupe/messages"
	"github.com/troupe-dev/troupe/runtime/driver"
)

// rootIsolation reports whether isolated exec and java tasks get their own
// root: only an agent running as root builds one (the exec driver runs
// the task in the host's root otherwise). A variable for tests.
var rootIsolation = func() bool { return os.Geteuid() == 0 }

// hostVolumes are the group's host volume requests by name.
func hostVolumes(a *messages.Allocation) map[string]*messages.VolumeRequest {
	var out map[string]*messages.VolumeRequest
	for name, v := range groupOf(a).GetVolumes() {
		if v.GetType() == "host" {
			if out == nil {
				out = map[string]*messages.VolumeRequest{}
			}
			out[name] = v
		}
	}
	return out
}

// hostVolumeMounts resolves task t's mounts of host volumes to the node's
// directories: each is bound at its destination in the task's own root,
// read-only when the node's volume, the group's request or the mount says
// so (as Nomad's). A task that runs in the host's root (raw_exec, a CSI
// plugin, qemu; an exec or java task of an agent not running as root)
// cannot have them, as in Nomad ("does not support host volumes"): the
// task fails rather than write where the destination names on the host. A volume the node does not offer (its agent was
// restarted without it) fails the task too.
func hostVolumeMounts(node *messages.Node, a *messages.Allocation, t *messages.Task) ([]driver.Mount, error) {
	reqs := hostVolumes(a)
	if reqs == nil {
		return nil, nil
	}
	var out []driver.Mount
	for _, vm := range t.GetVolumeMounts() {
		req, ok := reqs[vm.GetVolume()]
		if !ok {
			continue
		}
		if !ownRoot(t) {
			return nil, fmt.Errorf("%w: task driver %q for %q does not support host volumes",
				errHostVolume, t.GetDriver(), t.GetName())
		}
		if isolatedExec(t) && !rootIsolation() {
			return nil, fmt.Errorf("%w: task driver %q for %q does not support host volumes when the agent is not root (the task would run in the host's root)",
				errHostVolume, t.GetDriver(), t.GetName())
		}
		hv := node.GetHostVolumes()[req.GetSource()]
		switch {
		case hv == nil:
			return nil, fmt.Errorf("%w: no host volume named %q on this node (volume %q)",
				errHostVolume, req.GetSource(), vm.GetVolume())
		case hv.GetReadOnly() && !req.GetReadOnly():
			return nil, fmt.Errorf("%w: host volume %q is read-only on this node; volume %q asks to write",
				errHostVolume, req.GetSource(), vm.GetVolume())
		}
		out = append(out, driver.Mount{Source: hv.GetPath(), Destination: containerPath(vm.GetDestination()),
			ReadOnly: hv.GetReadOnly() || req.GetReadOnly() || vm.GetReadOnly()})
	}
	return out, nil
}
