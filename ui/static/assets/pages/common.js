// What the pages share: following a resource into a section of the page.

import { get, watch, token } from '../api.js';
import { errorText, html, shortID, badge } from '../dom.js';

// live follows path and calls draw(data) on each change (draw may be
// async); a failed read shows its error in el. The page counts the
// section as drawn after its first answer (opts.drawn: the ctx.track()
// to call then, when the caller made it). With opts.topics ('Job',
// 'Allocation:<job id>', ...) it follows the page's event stream: an
// event of those topics (for which opts.match(ev) holds, when given)
// reads path again; a stream the agent refuses (a token that may not
// read those topics) falls back to blocking queries. Without, it follows
// path with blocking queries (opts.wait bounds one). opts.have, when
// set, is path's answer ({data, index}) already drawn: it is not read
// again until it changes. opts.apply(ev), when given, applies an event
// to what is drawn in place: one it answers true for is not read again
// (a stream that lost events, or an event that comes while a read is on
// its way, still reads path again).
export function live(ctx, el, path, params, draw, opts = {}) {
  const drawn = opts.drawn || ctx.track(); // the caller's, when it tracks the section itself
  const onData = async (data) => {
    await draw(data);
    performance.mark(`troupe:drawn ${path}`); // uitest.Breakdown
    drawn();
  };
  const onError = (e) => { el.innerHTML = errorText(e); drawn(); };
  if (opts.have) drawn();
  if (!opts.topics) {
    watch(path, params, onData, onError, ctx.signal, opts.wait, opts.have?.index);
    return;
  }
  followEvents(ctx, path, params, opts, onData, onError);
}

async function followEvents(ctx, path, params, { topics, match, have, apply }, onData, onError) {
  // Subscribed before the first read, so that the page's sections open
  // one stream between them.
  const sub = ctx.events.subscribe(topics, {
    onEvent: (ev) => {
      if (match && !match(ev)) return;
      if (apply && !reading && apply(ev)) return;
      reread();
    },
    onLost: () => reread(),
    onRefused: () => blocking(),
  });
  // Blocking queries, from the index of what was drawn (0: read first).
  let drawnAt = 0;
  const blocking = () => watch(path, params, onData, onError, ctx.signal, undefined, drawnAt);
  let first = have;
  if (have) {
    drawnAt = have.index;
  } else {
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

// byNewest orders allocations newest first: by create index, then ID,
// reversed (Nomad's paging order of /v1/allocations, with ?reverse=true).
export const byNewest = (a, b) => (b.CreateIndex || 0) - (a.CreateIndex || 0) || cmp(b.ID, a.ID);
export const cmp = (a, b) => (a < b ? -1 : a > b ? 1 : 0);

// The rows of a long list drawn before the whole list is in: a
// window's rows and more (dom.js Windowed draws ~40 at first).
const FIRST = 60;

// liveList follows the list at path into view (a ListView), in the
// order sort gives. Its first FIRST rows are read and drawn first, as
// one page of a list that Nomad pages in that order (first: its path and
// params; ?per_page= is added), and the whole list after them, so that
// the rows in view do not wait for thousands that are not (read at once,
// a long list's transfer holds up the page's other reads too): the page
// is ready once those rows are drawn (troupe:ready), complete once the
// whole list is (a list of no more than FIRST rows is not read again).
// A first read that fails just reads the whole list.
export function liveList(ctx, view, path, params, sort, first, follow) {
  const drawn = ctx.track();
  const firstRows = async () => {
    try {
      const r = await get(first.path, { ...first.params, per_page: FIRST }, ctx.signal);
      if (!Array.isArray(r.data)) return undefined;
      view.set(r.data.sort(sort), r.next ? `the first ${r.data.length}; reading the others…` : undefined);
      performance.mark(`troupe:drawn ${first.path}`); // uitest.Breakdown
      drawn.part();
      return r.next ? undefined : r; // all of it
    } catch {
      return undefined; // the whole list's read shows what went wrong
    }
  };
  firstRows().then((have) => {
    if (ctx.signal.aborted) return;
    live(ctx, view.el, path, params, (list) => view.set((list || []).sort(sort)), { ...follow, drawn, have });
  });
}

// applyAlloc is liveList's follow.apply for a list of allocations (those
// keep(alloc) holds) in byNewest order: an Allocation event's payload is
// the allocation as it is now, put in place of its row (or inserted where
// it sorts), so that thousands are not read again for one that changed.
export const applyAlloc = (view, keep) => (ev) => {
  const a = ev.Payload?.Allocation;
  if (!a?.ID) return false; // not one it can apply: read the list again
  if (keep(a)) view.put(a, (x) => x.ID, byNewest);
  return true;
};

// allocsFirst is the first page of liveList of allocations newest first
// (byNewest): /v1/allocations by create index, reversed, of those filter
// (a job's, a node's) keeps.
export const allocsFirst = (namespace, filter) => ({ path: '/v1/allocations', params: { namespace, filter, reverse: true } });

// explainEmpty says why a list across namespaces came back empty when it
// was read without a token from an agent with ACLs on: such a list
// leaves out what the token may not read (for no token, everything)
// rather than refusing, as Nomad's do. The agent's 403 to
// /v1/acl/token/self tells ACLs are on (it answers 400 when they are
// off). Anything else clears el.
export async function explainEmpty(ctx, el, empty) {
  el.innerHTML = '';
  if (!empty || token()) return;
  try {
    await get('/v1/acl/token/self', {}, ctx.signal);
  } catch (e) {
    if (e.status === 403 && !ctx.signal.aborted) {
      el.innerHTML = html`<p class="error" data-denied>Permission denied (403): ACLs are on and no token is set, so this list shows nothing.
Enter a token's secret ID in the field above and press Set token.</p>`;
    }
  }
}
