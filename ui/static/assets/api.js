// The data layer: every page reads the agent's /v1 API through here.
// watch() follows a resource with Nomad's blocking queries (?index=N,
// answered when the data passes index N, with X-Nomad-Index); pages that
// follow raft state use the event stream instead (events.js, through
// pages/common.js live()) and fall back to watch() when it is refused.

const TOKEN_KEY = 'troupe.token';

export function token() { return localStorage.getItem(TOKEN_KEY) || ''; }
export function setToken(t) {
  if (t) localStorage.setItem(TOKEN_KEY, t); else localStorage.removeItem(TOKEN_KEY);
}

function headers() {
  const h = {};
  const t = token();
  if (t) h['X-Nomad-Token'] = t;
  return h;
}

// APIError is a refused read; index is its X-Nomad-Index (0: none);
// withToken says whether the read carried a token.
export class APIError extends Error {
  constructor(status, text, path, index = 0) {
    super(`${path}: ${status} ${text.trim()}`);
    this.status = status;
    this.index = index;
    this.withToken = !!token();
  }
}

function url(path, params) {
  const u = new URL(path, location.origin);
  for (const [k, v] of Object.entries(params || {})) {
    if (v !== undefined && v !== null && v !== '') u.searchParams.set(k, v);
  }
  return u;
}

// get reads path once: {data, index}.
export async function get(path, params, signal) {
  const resp = await fetch(url(path, params), { headers: headers(), signal });
  const index = Number(resp.headers.get('X-Nomad-Index') || 0);
  if (!resp.ok) throw new APIError(resp.status, await resp.text(), path, index);
  const data = await resp.json();
  performance.mark(`troupe:parsed ${path}`); // read and parsed (uitest.Breakdown)
  return { data, index, next: resp.headers.get('X-Nomad-NextToken') || '' };
}

// watch calls onData(data) with path's answer now and again each time it
// changes, until signal aborts. Each read after the first is a blocking
// query from the index of the last answer; wait bounds one (Nomad's
// ?wait=). A failed read calls onError and is retried after a backoff.
// from, when set, is the index of data the caller already has: the first
// read blocks until it changes.
export async function watch(path, params, onData, onError, signal, wait = '5m', from = 0) {
  let index = from;
  let backoff = 250;
  while (!signal.aborted) {
    try {
      const q = index ? { ...params, index, wait } : params;
      const r = await get(path, q, signal);
      backoff = 250;
      if (r.index !== index || !index) onData(r.data);
      // An index that went back (a new leader's store) starts over.
      index = r.index >= index ? r.index : 0;
    } catch (e) {
      if (signal.aborted) return;
      onError(e);
      await pause(backoff, signal);
      backoff = Math.min(backoff * 2, 10000);
    }
  }
}

function pause(ms, signal) {
  return new Promise((resolve) => {
    const t = setTimeout(resolve, ms);
    signal.addEventListener('abort', () => { clearTimeout(t); resolve(); }, { once: true });
  });
}

// streamBody reads path's body as text as it arrives, calling onText with
// each chunk, until it ends or signal aborts; a refusal throws APIError.
export async function streamBody(path, signal, onText, params) {
  const resp = await fetch(url(path, params), { headers: headers(), signal });
  if (!resp.ok) throw new APIError(resp.status, await resp.text(), path);
  const reader = resp.body.pipeThrough(new TextDecoderStream()).getReader();
  for (;;) {
    const { value, done } = await reader.read();
    if (done) return;
    onText(value);
  }
}

// follow streams path's body as text, calling onText with each chunk as
// it arrives (a followed log: /v1/client/fs/logs/<alloc>?follow=true&plain=true).
export async function follow(path, params, onText, onError, signal) {
  try {
    await streamBody(path, signal, onText, params);
  } catch (e) {
    if (!signal.aborted) onError(e);
  }
}
