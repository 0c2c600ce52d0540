// /ui/actors: the live actor tree of a node (?node=, default the agent's
// own), with each actor's kind, phase, mailbox, restarts and last
// message. ?alloc=<id> shows only that allocation's actors (and the
// actors above them).

import { get } from '../api.js';
import { html, section, ago } from '../dom.js';
import { live } from './common.js';

// The tree's counters (mailbox, messages) move without a state change:
// a blocking read of it returns at the latest after this long.
const COUNTER_WAIT = '2s';

export function render(root, params, ctx) {
  const node = ctx.query.get('node') || '';
  const alloc = ctx.query.get('alloc') || '';
  root.innerHTML = html`<h1>Actors</h1>
<form data-pick>Node <select name="node"><option value="">this agent</option></select>
${alloc ? html`<span class="muted">showing allocation ${alloc} — <a href="/ui/actors${node ? `?node=${encodeURIComponent(node)}` : ''}">show all</a></span>` : ''}</form>`;
  const pick = root.querySelector('select[name=node]');
  get('/v1/nodes', {}, ctx.signal).then(({ data }) => {
    for (const n of data) pick.add(new Option(`${n.Name} (${n.ID.slice(0, 8)})`, n.ID, false, n.ID === node));
  }, () => {});
  pick.addEventListener('change', () => {
    const q = new URLSearchParams({ ...(pick.value && { node: pick.value }), ...(alloc && { alloc }) });
    history.pushState(null, '', `/ui/actors${q.size ? `?${q}` : ''}`);
    dispatchEvent(new PopStateEvent('popstate'));
  });
  const el = section(root, 'tree');
  live(ctx, el, '/v1/actors', { node }, (tree) => {
    el.innerHTML = drawTree(tree, alloc);
  }, { wait: COUNTER_WAIT }); // not raft state: blocking reads of /v1/actors
}

function drawTree(tree, alloc) {
  const byPath = new Map((tree.Actors || []).map((a) => [a.Path, a]));
  let shown = null;
  if (alloc) {
    // The allocation's actors and every actor above them.
    shown = new Set();
    for (const a of byPath.values()) {
      if (!a.Path.includes(alloc)) continue;
      for (let p = a; p && !shown.has(p.Path); p = byPath.get(p.Parent)) shown.add(p.Path);
      for (const d of descendants(a, byPath)) shown.add(d);
    }
  }
  const roots = [...byPath.values()].filter((a) => !byPath.has(a.Parent) && (!shown || shown.has(a.Path)));
  return html`<p class="muted">Node ${tree.Node}: ${byPath.size} actors</p>
<ul class="tree">${roots.map((a) => drawActor(a, byPath, shown, alloc))}</ul>`;
}

function descendants(a, byPath, out = []) {
  for (const c of a.Children || []) {
    out.push(c);
    const ca = byPath.get(c);
    if (ca) descendants(ca, byPath, out);
  }
  return out;
}

function drawActor(a, byPath, shown, alloc) {
  const kids = (a.Children || []).filter((c) => byPath.has(c) && (!shown || shown.has(c))).map((c) => byPath.get(c));
  const hl = alloc && a.Path.includes(alloc) ? ' hl' : '';
  return html`<li data-path="${a.Path}" data-kind="${a.Kind}"><span class="actor${hl}">
<span class="path">${a.Path}</span><span class="badge">${a.Kind}</span><span>${a.Phase || '—'}</span>
<span title="mailbox">✉ ${a.MailboxLen}</span><span title="restarts">↻ ${a.Restarts}</span>
<span class="muted" title="last message">${a.LastMessage || ''} ${a.LastMessageAt ? ago(a.LastMessageAt) : ''}</span></span>
${kids.length ? html`<ul class="tree">${kids.map((k) => drawActor(k, byPath, shown, alloc))}</ul>` : ''}</li>`;
}
