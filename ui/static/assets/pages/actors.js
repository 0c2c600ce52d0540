// /ui/actors: the live actor tree of a node (?node=, default the agent's
// own), with each actor's kind, phase, mailbox, restarts and last
// message. ?alloc=<id> shows only that allocation's actors (and the
// actors above them).

import { get } from '../api.js';
import { html, section, ago, Windowed } from '../dom.js';
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
  const view = new TreeView(el);
  live(ctx, el, '/v1/actors', { node }, (tree) => {
    const rows = treeRows(tree, alloc);
    view.set(rows, `Node ${tree.Node}: ${(tree.Actors || []).length} actors`);
  }, { wait: COUNTER_WAIT }); // not raft state: blocking reads of /v1/actors
}

// The tree is drawn as rows of one fixed height, each indented by its
// depth, windowed (dom.js Windowed), so that a tree of tens of thousands
// of actors draws only the rows in view (and a few around them) as it
// scrolls; a small tree is drawn whole.
const ROW = 24; // px: ul.tree-rows li in style.css

// treeRows is the tree depth first, each actor with its depth: only the
// allocation's actors (and the actors above them) when alloc is set.
export function treeRows(tree, alloc) {
  const byPath = new Map((tree.Actors || []).map((a) => [a.Path, a]));
  let shown = null;
  if (alloc) {
    shown = new Set();
    for (const a of byPath.values()) {
      if (!a.Path.includes(alloc)) continue;
      for (let p = a; p && !shown.has(p.Path); p = byPath.get(p.Parent)) shown.add(p.Path);
      for (const d of descendants(a, byPath)) shown.add(d);
    }
  }
  const rows = [];
  const visit = (a, depth) => {
    rows.push({ a, depth, hl: !!alloc && a.Path.includes(alloc) });
    for (const c of a.Children || []) {
      const ca = byPath.get(c);
      if (ca && (!shown || shown.has(c))) visit(ca, depth + 1);
    }
  };
  for (const a of byPath.values()) {
    if (!byPath.has(a.Parent) && (!shown || shown.has(a.Path))) visit(a, 0);
  }
  return rows;
}

function descendants(a, byPath, out = []) {
  for (const c of a.Children || []) {
    out.push(c);
    const ca = byPath.get(c);
    if (ca) descendants(ca, byPath, out);
  }
  return out;
}

// TreeView draws rows in a scrolled box, keeping its scroll position
// across updates.
class TreeView {
  constructor(el) {
    el.innerHTML = '<p class="muted" data-count></p><div class="tree-scroll"><ul class="tree-rows"></ul></div>';
    this.count = el.querySelector('[data-count]');
    this.list = el.querySelector('ul');
    this.rows = [];
    this.window = new Windowed(el.querySelector('.tree-scroll'), ROW, (start, end) => this.paint(start, end));
  }

  set(rows, count) {
    this.rows = rows;
    this.count.textContent = count;
    this.window.draw(rows.length);
  }

  paint(start, end) {
    this.list.style.height = `${this.rows.length * ROW}px`;
    this.list.style.paddingTop = `${start * ROW}px`;
    this.list.dataset.rows = `${start}-${end}`;
    this.list.innerHTML = this.rows.slice(start, end).map(drawRow).join('');
  }
}

function drawRow({ a, depth, hl }) {
  return html`<li data-path="${a.Path}" data-kind="${a.Kind}" style="padding-left:${depth * 1.2}em"><span class="actor${hl ? ' hl' : ''}">
<span class="path">${a.Path}</span><span class="badge">${a.Kind}</span><span>${a.Phase || '—'}</span>
<span title="mailbox">✉ ${a.MailboxLen}</span><span title="restarts">↻ ${a.Restarts}</span>
<span class="muted" title="last message">${a.LastMessage || ''} ${a.LastMessageAt ? ago(a.LastMessageAt) : ''}</span></span></li>`.toString();
}
