package node

import (
	"context"
	"maps"
	"time"

	"github.com/asynkron/protoactor-go/actor"
	"google.golang.org/protobuf/proto"

	"github.com/troupe-dev/troupe/actors"
	"github.com/troupe-dev/troupe/messages"
	"github.com/troupe-dev/troupe/runtime/device"
)

// deviceFingerprintTimeout bounds one device fingerprint.
const deviceFingerprintTimeout = 30 * time.Second

// Messages of the device refresh.
type (
	// deviceTick: the refresh timer fired.
	deviceTick struct{}
	// devicesChanged: the plugin's health watch saw a change.
	devicesChanged struct{}
	// devicesFingerprinted is a refresh's result.
	devicesFingerprinted struct {
		groups []*messages.NodeDeviceResource
		err    error
	}
	// deviceWatchEnded: the plugin's Watch returned.
	deviceWatchEnded struct{ err error }
)

// clientDevices is the client actor's view of the host's devices.
type clientDevices struct {
	groups   []*messages.NodeDeviceResource // the last good fingerprint; never mutated
	known    bool                           // groups holds a fingerprint
	started  bool                           // the refresh runs
	inFlight bool                           // a refresh fingerprint runs
	again    bool                           // a change came while one ran
	timer    actors.Timer
	cancel   context.CancelFunc // ends the health watch
}

// startDevices starts, after the first registration, the periodic device
// fingerprint and, when the plugin can, its health watch.
func (c *client) startDevices(ctx actor.Context) {
	if c.spec.Devices == nil || c.dev.started || c.stopping {
		return
	}
	c.dev.started = true
	c.dev.timer = c.after(ctx, c.spec.DeviceInterval, &deviceTick{})
	w, ok := c.spec.Devices.(device.Watcher)
	if !ok {
		return
	}
	wctx, cancel := context.WithCancel(c.Context()) // ends with the actor too
	c.dev.cancel = cancel
	self, root := ctx.Self(), ctx.ActorSystem().Root
	actors.Go(ctx, func(_ context.Context) any {
		err := w.Watch(wctx, func() { root.Send(self, &devicesChanged{}) })
		return &deviceWatchEnded{err: err}
	})
}

// stopDevices ends the refresh timer and the health watch.
func (c *client) stopDevices() {
	if c.dev.timer != nil {
		c.dev.timer.Stop()
	}
	if c.dev.cancel != nil {
		c.dev.cancel()
	}
}

// refreshDevices fingerprints the devices in a worker; a change that comes
// while one runs makes it run once more afterwards.
func (c *client) refreshDevices(ctx actor.Context) {
	if c.spec.Devices == nil || c.stopping {
		return
	}
	if c.dev.inFlight {
		c.dev.again = true
		return
	}
	c.dev.inFlight = true
	p := c.spec.Devices
	actors.Go(ctx, func(life context.Context) any {
		cctx, cancel := context.WithTimeout(life, deviceFingerprintTimeout)
		defer cancel()
		groups, err := p.Fingerprint(cctx)
		return &devicesFingerprinted{groups: groups, err: err}
	})
}

// onDevicesFingerprinted registers the node again when its devices or
// their health changed, so that the servers stop offering an unhealthy
// instance, and arms the next refresh.
func (c *client) onDevicesFingerprinted(ctx actor.Context, m *devicesFingerprinted) {
	c.dev.inFlight = false
	switch {
	case m.err != nil:
		c.log.Warn("device fingerprint failed; keeping the last one", "error", m.err)
	case !c.dev.known || !sameDevices(c.dev.groups, m.groups):
		logDeviceChanges(c, c.dev.groups, m.groups)
		c.dev.groups, c.dev.known = m.groups, true
		c.reregister(ctx)
	default:
		c.dev.groups = m.groups // same health; newer attributes go with the next registration
	}
	if c.stopping {
		return
	}
	if c.dev.again {
		c.dev.again = false
		c.refreshDevices(ctx)
		return
	}
	if c.dev.timer != nil {
		c.dev.timer.Stop()
	}
	c.dev.timer = c.after(ctx, c.spec.DeviceInterval, &deviceTick{})
}

func (c *client) onDeviceWatchEnded(m *deviceWatchEnded) {
	if m.err != nil && !c.stopping {
		c.log.Info("device health watch ended; devices are fingerprinted every interval",
			"error", m.err, "interval", c.spec.DeviceInterval)
	}
}

// reregister sends the node to the servers again. While a registration
// waits for its retry, that retry carries the new devices.
func (c *client) reregister(ctx actor.Context) {
	if c.phase == clientReady || c.regInFlight {
		c.register(ctx)
	}
}

// withDevices puts copies of groups into the node's resources.
func withDevices(n *messages.Node, groups []*messages.NodeDeviceResource) {
	if n.NodeResources == nil {
		n.NodeResources = &messages.NodeResources{}
	}
	n.NodeResources.Devices = make([]*messages.NodeDeviceResource, len(groups))
	for i, g := range groups {
		n.NodeResources.Devices[i] = proto.Clone(g).(*messages.NodeDeviceResource)
	}
}

// deviceKey names a group (id "") or one of its instances.
type deviceKey struct{ group, id string }

type deviceHealth struct {
	healthy bool
	desc    string
}

// healthMap flattens groups into their instances' health.
func healthMap(groups []*messages.NodeDeviceResource) map[deviceKey]deviceHealth {
	out := map[deviceKey]deviceHealth{}
	for _, g := range groups {
		gid := device.GroupID(g)
		out[deviceKey{group: gid}] = deviceHealth{}
		for _, in := range g.GetInstances() {
			out[deviceKey{gid, in.GetID()}] = deviceHealth{healthy: in.GetHealthy(), desc: in.GetHealthDescription()}
		}
	}
	return out
}

// sameDevices reports whether a and b hold the same groups and instances
// with the same health, in any order. Attributes and locality are not
// compared: they do not change what the scheduler may offer.
func sameDevices(a, b []*messages.NodeDeviceResource) bool {
	return maps.Equal(healthMap(a), healthMap(b))
}

// logDeviceChanges logs what changed between two fingerprints.
func logDeviceChanges(c *client, before, after []*messages.NodeDeviceResource) {
	old, now := healthMap(before), healthMap(after)
	for k, h := range now {
		if k.id == "" {
			continue
		}
		was, had := old[k]
		switch {
		case !had:
			c.log.Info("device instance found", "group", k.group, "id", k.id, "healthy", h.healthy)
		case was.healthy && !h.healthy:
			c.log.Warn("device instance unhealthy", "group", k.group, "id", k.id, "reason", h.desc)
		case !was.healthy && h.healthy:
			c.log.Info("device instance healthy again", "group", k.group, "id", k.id)
		}
	}
	for k := range old {
		if _, ok := now[k]; !ok && k.id != "" {
			c.log.Warn("device instance gone", "group", k.group, "id", k.id)
		}
	}
	c.log.Info("devices changed: registering the node again")
}
