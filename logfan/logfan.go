package logfan

import (
	"bytes"
	"context"
	"log/slog"
	"sync"
	"sync/atomic"
)

// DefaultBuffer is how many lines a subscriber may fall behind before
// lines are dropped.
const DefaultBuffer = 512

// Hub is the set of subscribers of one log.
type Hub struct {
	mu   sync.RWMutex
	subs map[*Sub]struct{}
	// min is the lowest level a subscriber wants; active says there is
	// one (both read without the lock by Enabled).
	min    atomic.Int64
	active atomic.Bool
}

// NewHub returns a hub with no subscriber.
func NewHub() *Hub { return &Hub{subs: map[*Sub]struct{}{}} }

// Sub is one subscriber.
type Sub struct {
	hub     *Hub
	level   slog.Level
	json    bool
	lines   chan []byte
	dropped atomic.Uint64
	once    sync.Once
}

// Subscribe starts delivering the lines at level or above, as JSON when
// asJSON, else as text.
func (h *Hub) Subscribe(level slog.Level, asJSON bool) *Sub {
	s := &Sub{hub: h, level: level, json: asJSON, lines: make(chan []byte, DefaultBuffer)}
	h.mu.Lock()
	h.subs[s] = struct{}{}
	h.settle()
	h.mu.Unlock()
	return s
}

// Lines delivers the subscriber's lines (each ends in a newline).
func (s *Sub) Lines() <-chan []byte { return s.lines }

// Dropped is how many lines were dropped since the last call, for the
// subscriber's buffer was full.
func (s *Sub) Dropped() uint64 { return s.dropped.Swap(0) }

// Close ends the subscription.
func (s *Sub) Close() {
	s.once.Do(func() {
		s.hub.mu.Lock()
		delete(s.hub.subs, s)
		s.hub.settle()
		s.hub.mu.Unlock()
	})
}

// settle recomputes min and active; h.mu is held.
func (h *Hub) settle() {
	low := slog.Level(1 << 30)
	for s := range h.subs {
		low = min(low, s.level)
	}
	h.min.Store(int64(low))
	h.active.Store(len(h.subs) > 0)
}

func (h *Hub) wants(l slog.Level) bool {
	return h.active.Load() && int64(l) >= h.min.Load()
}

// publish renders r once per format a subscriber wants and hands the
// line to each subscriber without waiting.
func (h *Hub) publish(ctx context.Context, ops []op, r slog.Record) {
	h.mu.RLock()
	defer h.mu.RUnlock()
	var text, js []byte
	for s := range h.subs {
		if r.Level < s.level {
			continue
		}
		line := &text
		if s.json {
			line = &js
		}
		if *line == nil {
			*line = render(ctx, ops, r, s.json)
		}
		select {
		case s.lines <- *line:
		default:
			s.dropped.Add(1)
		}
	}
}

// render formats r with slog's own handlers, replaying the logger's
// With and WithGroup calls.
func render(ctx context.Context, ops []op, r slog.Record, asJSON bool) []byte {
	var buf bytes.Buffer
	opts := &slog.HandlerOptions{Level: slog.LevelDebug - 8}
	var h slog.Handler = slog.NewTextHandler(&buf, opts)
	if asJSON {
		h = slog.NewJSONHandler(&buf, opts)
	}
	for _, o := range ops {
		if o.group != "" {
			h = h.WithGroup(o.group)
		} else {
			h = h.WithAttrs(o.attrs)
		}
	}
	_ = h.Handle(ctx, r)
	return buf.Bytes()
}

// op is one With (attrs) or WithGroup (group) call on a logger.
type op struct {
	group string
	attrs []slog.Attr
}

// Wrap returns a handler that passes records to inner as before and to
// the hub's subscribers.
func (h *Hub) Wrap(inner slog.Handler) slog.Handler { return &handler{inner: inner, hub: h} }

type handler struct {
	inner slog.Handler
	hub   *Hub
	ops   []op
}

func (h *handler) Enabled(ctx context.Context, l slog.Level) bool {
	return h.inner.Enabled(ctx, l) || h.hub.wants(l)
}

func (h *handler) Handle(ctx context.Context, r slog.Record) error {
	var err error
	if h.inner.Enabled(ctx, r.Level) {
		err = h.inner.Handle(ctx, r)
	}
	if h.hub.wants(r.Level) {
		h.hub.publish(ctx, h.ops, r)
	}
	return err
}

func (h *handler) WithAttrs(attrs []slog.Attr) slog.Handler {
	return &handler{inner: h.inner.WithAttrs(attrs), hub: h.hub, ops: append(h.ops[:len(h.ops):len(h.ops)], op{attrs: attrs})}
}

func (h *handler) WithGroup(name string) slog.Handler {
	if name == "" {
		return h
	}
	return &handler{inner: h.inner.WithGroup(name), hub: h.hub, ops: append(h.ops[:len(h.ops):len(h.ops)], op{group: name})}
}
