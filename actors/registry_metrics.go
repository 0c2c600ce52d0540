package actors

import (
	"sort"
	"sync/atomic"
	"time"

	"github.com/asynkron/protoactor-go/actor"
)

// KindStats is what the actors of one kind did, for metrics: live ones
// and, for the counters, those that stopped.
type KindStats struct {
	Kind string
	// Live is how many actors of the kind run; MailboxLen the user
	// messages waiting in their mailboxes.
	Live, MailboxLen int
	// Phases counts the live by phase (Phaser; "" for none).
	Phases map[string]int
	// Messages handled and restarts, since the registry started.
	Messages uint64
	Restarts int64
	// WaitCount messages were timed from their post to their receipt,
	// WaitTotal in all; WaitMax is the longest wait among the live.
	WaitCount uint64
	WaitTotal time.Duration
	WaitMax   time.Duration
}

// Kinds sums the registry's actors by kind, sorted by kind. It walks the
// registry (one atomic read per field per actor): call it from a metrics
// collector, not per message.
func (r *Registry) Kinds() []KindStats {
	by := map[string]*KindStats{}
	r.mu.RLock()
	for kind, g := range r.gone {
		k := *g
		by[kind] = &k
	}
	for _, e := range r.entries {
		k := by[e.kind]
		if k == nil {
			k = &KindStats{Kind: e.kind}
			by[e.kind] = k
		}
		if k.Phases == nil {
			k.Phases = map[string]int{}
		}
		k.Phases[loadString(&e.phase)]++
		k.Live++
		k.MailboxLen += e.mailboxLen()
		e.addCounts(k)
		k.WaitMax = max(k.WaitMax, time.Duration(e.wait.maxNanos.Swap(0)))
	}
	r.mu.RUnlock()
	out := make([]KindStats, 0, len(by))
	for _, k := range by {
		out = append(out, *k)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Kind < out[j].Kind })
	return out
}

// keepCounts adds a stopping actor's counters to its kind's; r.mu is held.
func (r *Registry) keepCounts(e *entry) {
	k := r.gone[e.kind]
	if k == nil {
		k = &KindStats{Kind: e.kind}
		r.gone[e.kind] = k
	}
	e.addCounts(k)
}

func (e *entry) addCounts(k *KindStats) {
	k.Messages += e.messages.Load()
	k.Restarts += e.restarts.Load()
	k.WaitCount += e.wait.count.Load()
	k.WaitTotal += time.Duration(e.wait.totalNanos.Load())
}

// waitRing is how many posted user messages a waitClock remembers the
// post time of; a message that waits behind more is not timed.
const waitRing = 64

// waitClock is a mailbox middleware that times user messages from their
// post to their receipt. Posters take a sequence number and stamp its
// slot; the actor, the one reader, reads the slot of its own count. Two
// posters racing may swap stamps, which moves a wait by the race's width.
type waitClock struct {
	posted     atomic.Uint64
	received   uint64 // the mailbox's one consumer only
	stamps     [waitRing]atomic.Int64
	count      atomic.Uint64
	totalNanos atomic.Int64
	maxNanos   atomic.Int64
}

var _ actor.MailboxMiddleware = (*waitClock)(nil)

func (w *waitClock) MailboxStarted() {}
func (w *waitClock) MailboxEmpty()   {}

func (w *waitClock) MessagePosted(m any) {
	if _, sys := m.(actor.SystemMessage); sys {
		return
	}
	seq := w.posted.Add(1) - 1
	w.stamps[seq%waitRing].Store(nanotime())
}

func (w *waitClock) MessageReceived(m any) {
	if _, sys := m.(actor.SystemMessage); sys {
		return
	}
	seq := w.received
	w.received++
	if w.posted.Load()-seq > waitRing {
		return // its stamp was overwritten by a later post
	}
	at := w.stamps[seq%waitRing].Load()
	if at == 0 {
		return
	}
	d := max(nanotime()-at, 0)
	w.count.Add(1)
	w.totalNanos.Add(d)
	if d > w.maxNanos.Load() {
		w.maxNanos.Store(d)
	}
}

// start is the monotonic origin of nanotime.
var start = time.Now()

// nanotime is monotonic nanoseconds since start (never 0 after it).
func nanotime() int64 { return int64(time.Since(start)) + 1 }
