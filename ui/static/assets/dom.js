// Small helpers for drawing pages as HTML strings (escaped).

const ESC = { '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' };

export function esc(v) {
  return String(v ?? '').replace(/[&<>"']/g, (c) => ESC[c]);
}

// html is a tagged template that escapes every value except those made by
// raw() or html itself.
export function html(strings, ...values) {
  let out = strings[0];
  values.forEach((v, i) => { out += show(v) + strings[i + 1]; });
  return new Raw(out);
}

class Raw { constructor(s) { this.s = s; } toString() { return this.s; } }
export function raw(s) { return new Raw(s); }

function show(v) {
  if (v instanceof Raw) return v.s;
  if (Array.isArray(v)) return v.map(show).join('');
  return esc(v);
}

export function badge(status) {
  return html`<span class="badge s-${status || 'none'}">${status || '—'}</span>`;
}

export function shortID(id) { return (id || '').slice(0, 8); }

export function ago(nanos) {
  if (!nanos) return '—';
  return new Date(nanos / 1e6).toISOString().replace('T', ' ').replace(/\.\d+Z$/, 'Z');
}

// duration is nanoseconds as Go's time.Duration prints them (1h0m0s,
// 1m30s, 500ms, 0s).
export function duration(nanos) {
  let ns = Number(nanos) || 0;
  if (ns < 0) return `-${duration(-ns)}`;
  if (ns < 1e9) return ns >= 1e6 ? `${ns / 1e6}ms` : `${ns}ns`;
  const h = Math.floor(ns / 3.6e12);
  ns -= h * 3.6e12;
  const m = Math.floor(ns / 6e10);
  const s = (ns - m * 6e10) / 1e9;
  return h ? `${h}h${m}m${s}s` : m ? `${m}m${s}s` : `${s}s`;
}

// table draws rows (already paged) under heads.
export function table(heads, rows, empty = 'None.') {
  if (!rows.length) return html`<p class="muted">${empty}</p>`;
  return html`<table><thead><tr>${heads.map((h) => html`<th>${h}</th>`)}</tr></thead>
<tbody>${rows.map((r) => html`<tr>${r.map((c) => html`<td>${c}</td>`)}</tr>`)}</tbody></table>`;
}

// section is a region of a page that is redrawn on its own.
export function section(root, id) {
  let el = root.querySelector(`[data-section="${id}"]`);
  if (!el) {
    el = document.createElement('div');
    el.dataset.section = id;
    root.appendChild(el);
  }
  return el;
}

// errorText shows what went wrong with a read; a 403 (ACLs on) says
// what to do about it: set a token, or one that may read this.
export function errorText(e) {
  const text = html`<p class="error">${e.message || e}</p>`;
  if (e.status !== 403) return text;
  return html`${text}<p class="denied" data-denied>${e.withToken
    ? 'The token set above may not read this: set one whose policies allow it.'
    : 'ACLs are on and this read needs a token: enter a token\'s secret ID in the field above and press Set token.'}</p>`;
}

// Windowed draws a long list of rows of one height in a scrolled box:
// only the rows in view and OVERSCAN around each edge of it, again as it
// scrolls (at most once a frame); up to WHOLE rows are drawn whole.
// paint(start, end) draws rows [start, end) of n; the list scrolls as
// though all were there (paint pads above and below them by rowHeight
// a row).
const WHOLE = 300;
const OVERSCAN = 10;

export class Windowed {
  constructor(box, rowHeight, paint) {
    Object.assign(this, { box, rowHeight, paint, n: 0, frame: 0 });
    box.addEventListener('scroll', () => {
      if (this.n > WHOLE && !this.frame) {
        this.frame = requestAnimationFrame(() => { this.frame = 0; this.draw(); });
      }
    });
  }

  // draw paints the rows in view of n (the list's length now).
  draw(n = this.n) {
    this.n = n;
    let start = 0;
    let end = n;
    if (n > WHOLE) {
      // A first draw reads no layout (which would lay the page out once
      // more before its rows are in): the box is at its top, and, empty,
      // no higher than its header.
      const first = !this.drawn;
      this.drawn = true;
      const top = first ? 0 : this.box.scrollTop;
      const height = first ? innerHeight : Math.max(this.box.clientHeight, innerHeight);
      start = Math.min(n, Math.max(0, Math.floor(top / this.rowHeight) - OVERSCAN));
      end = Math.min(n, Math.ceil((top + height) / this.rowHeight) + OVERSCAN);
    }
    this.paint(start, end);
  }
}

// ListView draws a list as a table under heads in el, its rows (of one
// line each) windowed (Windowed) in a scrolled box that keeps its place
// across updates: set(list) draws it again. row(item) is its cells.
const TABLE_ROW = 29; // px: table.rows td in style.css (one line)

export class ListView {
  constructor(el, heads, row, empty) {
    Object.assign(this, { el, heads, row, empty, list: [] });
    el.innerHTML = html`<p class="muted" data-count></p><div class="rows-scroll" hidden><table class="rows">
<thead><tr>${heads.map((h) => html`<th>${h}</th>`)}</tr></thead><tbody></tbody></table></div>`.toString();
    this.count = el.querySelector('[data-count]');
    this.box = el.querySelector('.rows-scroll');
    this.body = el.querySelector('tbody');
    this.rows = new Windowed(this.box, TABLE_ROW, (start, end) => this.paint(start, end));
  }

  // set draws list; note, when given, is said above it instead of its
  // length (a part of a list still on its way).
  set(list, note) {
    this.list = list;
    this.box.hidden = !list.length;
    this.count.textContent = list.length ? note || `${list.length} in all` : this.empty;
    this.rows.draw(list.length);
  }

  // put draws item, a list item as it is now, in the place of the one of
  // the same key(item) if it sorts there still (only its row is drawn
  // again, if in view), else where sort puts it (the rows in view are
  // drawn again). The list must be in sort's order.
  put(item, key, sort) {
    const list = this.list;
    const k = key(item);
    const at = lowerBound(list, item, sort);
    const i = at < list.length && key(list[at]) === k ? at : list.findIndex((x) => key(x) === k);
    if (i >= 0 && sort(list[i], item) === 0) {
      list[i] = { ...list[i], ...item };
      const tr = this.body.querySelector(`tr[data-row="${i}"]`);
      if (tr) tr.outerHTML = this.rowHTML(list[i], i);
      return;
    }
    if (i >= 0) list.splice(i, 1);
    list.splice(lowerBound(list, item, sort), 0, item);
    this.set(list);
  }

  rowHTML(item, i) {
    return html`<tr data-row="${i}">${this.row(item).map((c) => html`<td>${c}</td>`)}</tr>`.toString();
  }

  paint(start, end) {
    const pad = (rows) => (rows ? `<tr class="pad" style="height:${rows * TABLE_ROW}px"><td colspan="${this.heads.length}"></td></tr>` : '');
    const rows = this.list.slice(start, end).map((item, i) => this.rowHTML(item, start + i));
    this.body.innerHTML = pad(start) + rows.join('') + pad(this.list.length - end);
  }
}

// lowerBound is the first index of list (in sort's order) whose item
// does not sort before item.
function lowerBound(list, item, sort) {
  let lo = 0;
  let hi = list.length;
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    if (sort(list[mid], item) < 0) lo = mid + 1; else hi = mid;
  }
  return lo;
}
