// What the pages share: following a resource into a section of the page.

import { get, watch } from '../api.js';
import { errorText, html, shortID, badge } from '../dom.js';

// live follows path and calls draw(data) on each change (draw may be
// async); a failed read shows its error in el. The page counts the
// section as drawn after its first answer. With opts.topics ('Job',
// 'Allocation:<job id>', ...) it follows the page's event stream: an
// event of those topics (for which opts.match(ev) holds, when given)
// reads path again; a stream the agent refuses (a token that may not
// read those topics) falls back to blocking queries. Without, it follows
// path with blocking queries (opts.wait bounds one).
export function live(ctx, el, path, params, draw, opts = {}) {
  const drawn = ctx.track();
  const onData = async (data) => {
    await draw(data);
    performance.mark(`troupe:drawn ${path}`); // uitest.Breakdown
    drawn();
  };
  const onError = (e) => { el.innerHTML = errorText(e); drawn(); };
  if (!opts.topics) {
    watch(path, params, onData, onError, ctx.signal, opts.wait);
    return;
  }
  followEvents(ctx, path, params, opts, onData, onError);
}

async function followEvents(ctx, path, params, { topics, match }, onData, onError) {
  // Subscribed before the first read, so that the page's sections open
  // one stream between them.
  const sub = ctx.events.subscribe(topics, {
    onEvent: (ev) => { if (!match || match(ev)) reread(); },
    onLost: () => reread(),
    onRefused: () => blocking(),
  });
  // Blocking queries, from the index of what was drawn (0: read first).
  let drawnAt = 0;
  const blocking = () => watch(path, params, onData, onError, ctx.signal, undefined, drawnAt);
  let first;
  try {
    first = await get(path, params, ctx.signal);
    await onData(first.data);
    drawnAt = first.index;
  } catch (e) {
    if (ctx.signal.aborted) return;
    onError(e);
    // Not there yet (a job about to be registered): its events bring it.
    if (e.status !== 404 || !e.index) { sub.cancel(); blocking(); return; }
    first = { index: e.index };
  }
  // Events that come while a read is on its way read once more after it.
  let reading = false;
  let again = false;
  const reread = async () => {
    if (reading) { again = true; return; }
    reading = true;
    try {
      do {
        again = false;
        const r = await get(path, params, ctx.signal);
        sub.moveTo(r.index);
        await onData(r.data);
        drawnAt = r.index;
      } while (again && !ctx.signal.aborted);
    } catch (e) {
      if (!ctx.signal.aborted) onError(e);
    }
    reading = false;
  };
  sub.start(first.index);
}

export const jobHref = (id, ns) => `/ui/jobs/${encodeURIComponent(id)}@${encodeURIComponent(ns || 'default')}`;
export const allocHref = (id) => `/ui/allocations/${encodeURIComponent(id)}`;
export const nodeHref = (id) => `/ui/clients/${encodeURIComponent(id)}`;

export const allocHeads = ['ID', 'Task group', 'Job', 'Node', 'Version', 'Desired', 'Status'];
export function allocRow(a) {
  return [
    html`<a href="${allocHref(a.ID)}">${shortID(a.ID)}</a>`,
    a.TaskGroup,
    html`<a href="${jobHref(a.JobID, a.Namespace)}">${a.JobID}</a>`,
    a.NodeID ? html`<a href="${nodeHref(a.NodeID)}">${a.NodeName || shortID(a.NodeID)}</a>` : '—',
    a.JobVersion ?? '',
    a.DesiredStatus,
    badge(a.ClientStatus),
  ];
}

// byNewest orders allocations newest first.
export const byNewest = (a, b) => (b.CreateIndex || 0) - (a.CreateIndex || 0);
