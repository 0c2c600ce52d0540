package actors

import (
	"fmt"
	"reflect"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/asynkron/protoactor-go/actor"
)

// Phaser is implemented by actors that have a named state (a phase).
type Phaser interface {
	Phase() string
}

// Info is one actor as the tree shows it.
type Info struct {
	Path          string
	Kind          string
	Parent        string
	Children      []string
	Phase         string
	MailboxLen    int
	Restarts      int
	LastMessage   string
	LastMessageAt int64 // unix nanos
	Messages      uint64
}

// entry is what an actor's middleware reports; fields are atomics because
// the tree is read from HTTP handlers while the actor runs.
type entry struct {
	kind     string
	parent   atomic.Value // string
	mailbox  atomic.Value // actor.Mailbox
	phase    atomic.Value // string
	last     atomic.Value // string
	lastAt   atomic.Int64
	messages atomic.Uint64
	restarts atomic.Int64
	wait     waitClock // how long user messages waited (registry_metrics.go)
}

// Registry records what each live actor reports about itself. It is an
// observability side table: the set of actors comes from protoactor's
// process registry, so the tree cannot list an actor that is gone.
type Registry struct {
	mu      sync.RWMutex
	entries map[string]*entry
	gone    map[string]*KindStats // counts of stopped actors, by kind
}

// NewRegistry returns an empty registry.
func NewRegistry() *Registry {
	return &Registry{entries: map[string]*entry{}, gone: map[string]*KindStats{}}
}

// Props builds props for one actor of kind, with the reporting middleware
// (which also ends the actor's Lifetime when it stops) and a counting
// mailbox.
func (r *Registry) Props(kind string, producer actor.Producer, opts ...actor.PropsOption) *actor.Props {
	e := &entry{kind: kind}
	unbounded := actor.Unbounded(&e.wait)
	all := append([]actor.PropsOption{
		actor.WithMailbox(func() actor.Mailbox {
			mb := unbounded()
			e.mailbox.Store(mb)
			return mb
		}),
		actor.WithReceiverMiddleware(r.middleware(e)),
		actor.WithDispatcher(sharedDispatcher),
	}, opts...)
	return actor.PropsFromProducer(producer, all...)
}

func (r *Registry) middleware(e *entry) actor.ReceiverMiddleware {
	return func(next actor.ReceiverFunc) actor.ReceiverFunc {
		return func(c actor.ReceiverContext, env *actor.MessageEnvelope) {
			switch env.Message.(type) {
			case *actor.Started:
				if p := c.Parent(); p != nil {
					e.parent.Store(p.Id)
				}
				r.mu.Lock()
				r.entries[c.Self().Id] = e
				r.mu.Unlock()
			case *actor.Restarting:
				e.restarts.Add(1)
			}
			endLifetime(c.Actor(), env.Message)
			e.messages.Add(1)
			e.last.Store(typeName(env.Message))
			e.lastAt.Store(time.Now().UnixNano())
			next(c, env)
			if ph, ok := c.Actor().(Phaser); ok {
				e.phase.Store(ph.Phase())
			}
			if _, ok := env.Message.(*actor.Stopped); ok {
				r.mu.Lock()
				delete(r.entries, c.Self().Id)
				r.keepCounts(e)
				r.mu.Unlock()
			}
		}
	}
}

// Tree lists every live actor of sys that reported through this registry,
// with parent and children, sorted by path.
func (r *Registry) Tree(sys *actor.ActorSystem) []*Info {
	live := map[string]bool{}
	for _, bucket := range sys.ProcessRegistry.LocalPIDs.LocalPIDs {
		for _, id := range bucket.Keys() {
			live[id] = true
		}
	}
	r.mu.RLock()
	out := make([]*Info, 0, len(r.entries))
	byPath := map[string]*Info{}
	for id, e := range r.entries {
		if !live[id] {
			continue
		}
		in := &Info{
			Path:          id,
			Kind:          e.kind,
			Parent:        loadString(&e.parent),
			MailboxLen:    e.mailboxLen(),
			Restarts:      int(e.restarts.Load()),
			LastMessageAt: e.lastAt.Load(),
			Messages:      e.messages.Load(),
		}
		in.Phase, in.LastMessage = loadString(&e.phase), loadString(&e.last)
		out = append(out, in)
		byPath[id] = in
	}
	r.mu.RUnlock()
	for _, in := range out {
		if p := byPath[in.Parent]; p != nil {
			p.Children = append(p.Children, in.Path)
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Path < out[j].Path })
	for _, in := range out {
		sort.Strings(in.Children)
	}
	return out
}

// typeNames caches typeName's answer per type: the middleware names every
// message an actor handles, and formatting "%T" each time cost a few
// percent of a busy leader's CPU.
var typeNames sync.Map // reflect.Type -> string

func typeName(m any) string {
	t := reflect.TypeOf(m)
	if s, ok := typeNames.Load(t); ok {
		return s.(string)
	}
	s := strings.TrimPrefix(fmt.Sprintf("%T", m), "*")
	typeNames.Store(t, s)
	return s
}

// mailboxLen is how many user messages wait in the actor's mailbox.
func (e *entry) mailboxLen() int {
	if mb, ok := e.mailbox.Load().(actor.Mailbox); ok {
		return mb.UserMessageCount()
	}
	return 0
}

func loadString(v *atomic.Value) string {
	s, _ := v.Load().(string)
	return s
}
