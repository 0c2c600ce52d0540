package node

import (
	"context"
	"fmt"
	"time"

	"github.com/asynkron/protoactor-go/actor"
	"google.golang.org/protobuf/proto"

	"github.com/troupe-dev/troupe/actors"
	"github.com/troupe-dev/troupe/messages"
)

// ProbeCSI fingerprints the CSI plugin listening on socket: the controller
// and/or node instance it offers (by pluginType: monolith, controller,
// node). It blocks; actors call it from workers.
type ProbeCSI func(ctx context.Context, socket, pluginID, pluginType string) (controller, node *messages.CSIInfo, err error)

// probeSpec is one CSI plugin task to watch.
type probeSpec struct {
	allocID, task, pluginID, pluginType, socket string
	probe                                       ProbeCSI
	clock                                       actors.Clock
	interval                                    time.Duration
}

// pluginInstance is a probe's report to the client actor.
type pluginInstance struct {
	key              string // allocID/task
	socket           string
	controller, node *messages.CSIInfo
}

type (
	probeTick   struct{}
	probeResult struct {
		controller, node *messages.CSIInfo
		err              error
	}
)

// pluginProbe ("client/plugins/<alloc>/<task>") fingerprints a CSI plugin
// task's socket now and then and reports its health to the client actor.
type pluginProbe struct {
	actors.Lifetime // ends the workers on stop
	spec            *probeSpec
	timer           actors.Timer
	phase           string
}

func newPluginProbe(spec *probeSpec) actor.Producer {
	return func() actor.Actor { return &pluginProbe{spec: spec, phase: "probing"} }
}

// Phase names the actor's state for the actor tree.
func (p *pluginProbe) Phase() string { return p.phase }

// Receive dispatches.
func (p *pluginProbe) Receive(ctx actor.Context) {
	switch m := ctx.Message().(type) {
	case *actor.Started, *probeTick:
		p.probe(ctx)
	case *probeResult:
		p.onResult(ctx, m)
	case *actor.Stopping:
		if p.timer != nil {
			p.timer.Stop()
		}
	}
}

func (p *pluginProbe) probe(ctx actor.Context) {
	s := p.spec
	actors.Go(ctx, func(life context.Context) any {
		c, cancel := context.WithTimeout(life, 10*time.Second)
		defer cancel()
		ctrl, node, err := s.probe(c, s.socket, s.pluginID, s.pluginType)
		return &probeResult{controller: ctrl, node: node, err: err}
	})
}

func (p *pluginProbe) onResult(ctx actor.Context, m *probeResult) {
	s := p.spec
	now := s.clock.Now().UTC().Format(time.RFC3339)
	ctrl, node := m.controller, m.node
	if m.err != nil {
		// Report the instances the task should offer, unhealthy, with why.
		p.phase = "unhealthy"
		desc := fmt.Sprintf("probe of %s failed: %v", s.socket, m.err)
		mk := func() *messages.CSIInfo {
			return &messages.CSIInfo{PluginID: s.pluginID, AllocID: s.allocID, HealthDescription: desc, UpdateTime: now}
		}
		if s.pluginType != "node" {
			ctrl = mk()
		}
		if s.pluginType != "controller" {
			node = mk()
		}
	} else {
		p.phase = "healthy"
		for _, in := range []*messages.CSIInfo{ctrl, node} {
			if in != nil {
				in.AllocID, in.UpdateTime = s.allocID, now
			}
		}
	}
	ctx.Send(ctx.Parent(), &pluginInstance{key: s.allocID + "/" + s.task, socket: s.socket, controller: ctrl, node: node})
	self, root := ctx.Self(), ctx.ActorSystem().Root
	p.timer = s.clock.AfterFunc(s.interval, func() { root.Send(self, &probeTick{}) })
}

// sameInfo compares two instance reports, ignoring when they were made.
func sameInfo(a, b *messages.CSIInfo) bool {
	if a == nil || b == nil {
		return a == b
	}
	ac, bc := proto.Clone(a).(*messages.CSIInfo), proto.Clone(b).(*messages.CSIInfo)
	ac.UpdateTime, bc.UpdateTime = "", ""
	return proto.Equal(ac, bc)
}
