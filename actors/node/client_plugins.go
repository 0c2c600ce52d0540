package node

import (
	"context"
	"sort"
	"time"

	"github.com/asynkron/protoactor-go/actor"
	"google.golang.org/grpc/codes"

	"github.com/troupe-dev/troupe/actors"
	"github.com/troupe-dev/troupe/messages"
)

// controllerTimeout bounds one controller RPC run for the leader.
const controllerTimeout = 2 * time.Minute

// pluginsSent is the answer to reporting the node's plugin instances.
type pluginsSent struct{ err error }

// watchPlugins starts a probe for each CSI plugin task of the allocation
// once it runs, and stops it (dropping its instances) once it stops.
func (c *client) watchPlugins(ctx actor.Context, up *messages.Allocation) {
	a := c.table.alloc(up.GetID())
	if a == nil || c.spec.ProbeCSI == nil || c.spec.PluginSocket == nil {
		return
	}
	for _, g := range a.GetJob().GetTaskGroups() {
		if g.GetName() != a.GetTaskGroup() {
			continue
		}
		for _, t := range g.GetTasks() {
			cfg := t.GetCSIPluginConfig()
			if cfg == nil {
				continue
			}
			key := a.GetID() + "/" + t.GetName()
			running := up.GetTaskStates()[t.GetName()].GetState() == messages.TaskStateRunning && !up.ClientTerminalStatus()
			pid, watched := c.probes[key]
			switch {
			case running && !watched:
				spec := &probeSpec{allocID: a.GetID(), task: t.GetName(), pluginID: cfg.GetID(), pluginType: cfg.GetType(),
					socket: c.spec.PluginSocket(a.GetID(), t.GetName(), cfg.GetMountDir()), probe: c.spec.ProbeCSI,
					clock: c.spec.Clock, interval: c.spec.PluginProbeInterval}
				props := actor.PropsFromProducer(newPluginProbe(spec), actors.WithLifetime())
				if c.spec.Registry != nil {
					props = c.spec.Registry.Props("plugin", newPluginProbe(spec))
				}
				p, err := ctx.SpawnNamed(props, "plugins/"+key)
				if err != nil {
					c.log.Error("spawn plugin probe", "plugin", cfg.GetID(), "error", err)
					continue
				}
				c.probes[key] = p
			case !running && watched:
				ctx.Stop(pid)
				delete(c.probes, key)
				c.spec.Plugins.remove(key)
				if _, had := c.plugins[key]; had {
					delete(c.plugins, key)
					c.sendPlugins(ctx)
				}
			}
		}
	}
}

// onPluginInstance records a probe's report and, when it changed, sends
// the node's whole set of instances to the servers.
func (c *client) onPluginInstance(ctx actor.Context, m *pluginInstance) {
	if _, watched := c.probes[m.key]; !watched {
		return // a late report from a stopped probe
	}
	old := c.plugins[m.key]
	c.plugins[m.key] = m
	c.spec.Plugins.set(m.key, m.socket, m.controller, m.node)
	if old != nil && sameInfo(old.controller, m.controller) && sameInfo(old.node, m.node) {
		return
	}
	c.sendPlugins(ctx)
}

func (c *client) sendPlugins(ctx actor.Context) {
	up := &messages.UpsertPluginInstances{NodeID: c.spec.Node.GetID()}
	keys := make([]string, 0, len(c.plugins))
	for k := range c.plugins {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		if in := c.plugins[k]; in.controller != nil {
			up.Controllers = append(up.Controllers, in.controller)
		}
		if in := c.plugins[k]; in.node != nil {
			up.Nodes = append(up.Nodes, in.node)
		}
	}
	srv := c.spec.Server
	actors.Go(ctx, func(life context.Context) any {
		cctx, cancel := context.WithTimeout(life, 30*time.Second)
		defer cancel()
		return &pluginsSent{err: srv.UpsertPlugins(cctx, up)}
	})
}

func (c *client) onPluginsSent(m *pluginsSent) {
	if m.err != nil {
		// The next probe that sees a change, or the next start, sends again.
		c.log.Warn("reporting CSI plugin instances failed", "error", m.err)
		for k := range c.plugins {
			c.plugins[k] = &pluginInstance{key: k, socket: c.plugins[k].socket} // force a resend on the next report
		}
	}
}

// onControllerRequest runs a controller RPC that the leader's controller
// actor routed to this node, on the local controller instance of the
// plugin, in a worker that answers the requester.
func (c *client) onControllerRequest(ctx actor.Context, m *messages.ControllerRequest) {
	pluginID := m.GetOp().GetPluginID()
	socket, _, ok := c.spec.Plugins.Controller(pluginID)
	if !ok || c.spec.RunController == nil {
		ctx.Respond(messages.ControllerResult(codes.Unavailable,
			"no healthy controller instance of plugin "+pluginID+" on node "+c.spec.Node.GetID()))
		return
	}
	run := c.spec.RunController
	actors.Reply(ctx, func(life context.Context) any {
		cctx, cancel := context.WithTimeout(life, controllerTimeout)
		defer cancel()
		return run(cctx, socket, m)
	})
}
