// The event stream, shared by a page's sections: one /v1/event/stream
// connection per page (a browser holds only six per host), for the union
// of the topics its sections follow, read as newline-delimited JSON
// frames. Each subscriber says from which raft index on it wants events
// (the X-Nomad-Index of its first read) and gets each frame once: a
// stream opened again (a topic added, a broken connection) starts from
// the oldest index a subscriber still waits for, and frames a subscriber
// already had are skipped.

import { streamBody } from './api.js';

export class EventFeed {
  constructor(signal) {
    this.signal = signal;
    this.subs = new Set();
    this.topics = new Set();
    this.conn = null; // AbortController of the open stream
    this.from = 0; // the index the open stream started from
    this.timer = 0;
    this.backoff = 250;
    this.refused = null; // the error of a stream the agent refused
    this.lost = null; // after a lost-index error: the subscribers yet to read again
    this.added = false; // a topic was added since the stream opened
    signal.addEventListener('abort', () => this.conn?.abort(), { once: true });
  }

  // subscribe calls onEvent(ev, frameIndex) for each event of topics
  // ('Job', 'Job:<key>') after the index the subscriber starts from
  // (sub.start(index), once it read what it shows); onLost() when the
  // agent no longer holds what was missed (the subscriber reads again,
  // then calls sub.moveTo(index)); onRefused(err) when the agent refuses
  // the stream (the subscriber falls back to blocking queries). A page's
  // sections subscribe as they are drawn, so the stream opens once, with
  // every topic, when each has started (or cancelled, sub.cancel()).
  subscribe(topics, { onEvent, onLost, onRefused }) {
    const sub = { topics: topics.map(parseTopic), index: null, onEvent, onLost, onRefused };
    sub.start = (index) => {
      sub.index = index;
      if (this.refused) { this.subs.delete(sub); onRefused(this.refused); return; }
      if (this.ready() && (!this.conn || index + 1 < this.from || this.added)) this.reopen(0);
    };
    sub.cancel = () => { this.subs.delete(sub); if (this.ready() && !this.conn) this.reopen(0); };
    sub.moveTo = (i) => {
      sub.index = Math.max(sub.index, i);
      // After a loss, the stream opens again once every subscriber read.
      if (this.lost?.delete(sub) && !this.lost.size) { this.lost = null; this.reopen(0); }
    };
    this.subs.add(sub);
    for (const t of topics) if (!this.topics.has(t)) { this.topics.add(t); this.added = true; }
    return sub;
  }

  // ready says every subscriber knows where it starts.
  ready() {
    for (const s of this.subs) if (s.index === null) return false;
    return this.subs.size > 0;
  }

  // reopen (re)starts the stream after ms; calls close together, so
  // sections that subscribe at once open one stream.
  reopen(ms) {
    clearTimeout(this.timer);
    this.timer = setTimeout(() => this.open(), ms);
  }

  async open() {
    if (this.signal.aborted || !this.ready()) return;
    this.conn?.abort();
    this.added = false;
    const conn = new AbortController();
    this.conn = conn;
    this.from = Math.min(...[...this.subs].map((s) => s.index)) + 1;
    const params = new URLSearchParams({ index: this.from, namespace: '*' });
    for (const t of this.topics) params.append('topic', t);
    let buf = '';
    try {
      await streamBody(`/v1/event/stream?${params}`, conn.signal, (chunk) => {
        buf += chunk;
        let nl;
        while ((nl = buf.indexOf('\n')) >= 0) {
          const line = buf.slice(0, nl).trim();
          buf = buf.slice(nl + 1);
          if (line) this.frame(JSON.parse(line));
        }
        this.backoff = 250;
      });
    } catch (e) {
      if (conn.signal.aborted) return;
      if (e.status >= 400 && e.status < 500) { this.refuse(e); return; }
    }
    if (this.conn === conn && !conn.signal.aborted) {
      this.reopen(this.backoff); // the connection broke: carry on where it stopped
      this.backoff = Math.min(this.backoff * 2, 10000);
    }
  }

  frame(f) {
    if (f.Error) {
      // Too far behind what the agent keeps: every subscriber reads again
      // (sub.moveTo), then the stream opens from where they are (or
      // after a while, should a read fail).
      this.conn.abort();
      this.lost = new Set([...this.subs].filter((s) => s.index !== null));
      this.reopen(10000);
      for (const s of this.lost) s.onLost();
      return;
    }
    if (!f.Events) return; // a heartbeat
    for (const s of this.subs) {
      if (s.index === null || f.Index <= s.index) continue; // not started, or had it
      s.index = f.Index;
      for (const ev of f.Events) if (s.topics.some((t) => matches(t, ev))) s.onEvent(ev, f.Index);
    }
  }

  // refuse tells the started subscribers the stream is refused (those
  // yet to start learn it when they do).
  refuse(e) {
    this.refused = e;
    for (const s of [...this.subs]) {
      if (s.index === null) continue;
      this.subs.delete(s);
      s.onRefused(e);
    }
  }
}

function parseTopic(t) {
  const i = t.indexOf(':');
  return i < 0 ? { topic: t, key: '*' } : { topic: t.slice(0, i), key: t.slice(i + 1) || '*' };
}

function matches(t, ev) {
  if (t.topic !== '*' && t.topic !== ev.Topic) return false;
  return t.key === '*' || t.key === ev.Key || (ev.FilterKeys || []).includes(t.key);
}
